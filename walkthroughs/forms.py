import re

from django import forms
from django.conf import settings

from stackbench.lib.git import GitError, is_remote, is_repository, remote_branches
from stackbench_site.queries import QueryForm
from walkthroughs.models import Library, Network, repository_refusal


class LibraryItemsForm(QueryForm):
    """What of a library's walkthroughs and pages its page lists."""

    q = forms.CharField(required=False)
    state = forms.ChoiceField(choices=[("failing", "with findings"), ("never", "never run")], required=False)


class PresentForm(forms.Form):
    walkthrough = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 12}),
        help_text="The walkthrough as JSON, or in its markdown form.",
    )
    file = forms.FileField(required=False, help_text="Or upload it (.json or .md).")
    repo_path = forms.CharField(
        max_length=500,
        label="Repository",
        help_text="The git repository its comments and diffs refer to (a library's docs "
        "repository or a folder under STACKBENCH_REPO_ROOTS).",
    )
    library = forms.ModelChoiceField(queryset=Library.objects.all(), required=False)

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("file")
        if upload and upload.size > settings.STACKBENCH_UPLOAD_MAX_BYTES:
            raise forms.ValidationError(f"{upload.name} is over the upload limit.")
        if not upload and not (cleaned.get("walkthrough") or "").strip():
            raise forms.ValidationError("Paste the walkthrough or upload its file.")
        return cleaned

    def source(self) -> str:
        upload = self.cleaned_data.get("file")
        if upload:
            return upload.read().decode("utf-8", "replace")
        return self.cleaned_data["walkthrough"]


class LibraryForm(forms.ModelForm):
    class Meta:
        model = Library
        fields = [
            "name",
            "pypi_name",
            "default_version",
            "default_backend",
            "python_version",
            "network",
            "docs_repo",
            "docs_branch",
            "docs_folder",
            "walkthrough_pattern",
        ]
        labels = {"pypi_name": "PyPI name"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["network"].required = False

    def clean_network(self):
        return self.cleaned_data["network"] or Network.REGISTRIES

    def clean_python_version(self):
        wanted = self.cleaned_data["python_version"].strip()
        if wanted and not re.fullmatch(r"3(\.\d+){0,2}", wanted):
            raise forms.ValidationError("Give a Python version such as 3.11 or 3.11.2, or leave it empty.")
        return wanted

    def clean_docs_repo(self):
        repo = self.cleaned_data["docs_repo"].strip()
        if repo and is_remote(repo):
            try:
                self.remote_branches = remote_branches(repo)
            except GitError as exc:
                raise forms.ValidationError(f"{repo} cannot be reached: {exc}") from None
        elif repo and not is_repository(repo):
            raise forms.ValidationError(f"{repo} is not a git repository on this server (nor a git URL).")
        elif repo and (refusal := repository_refusal(repo)):
            raise forms.ValidationError(refusal[0].upper() + refusal[1:] + ".")
        return repo

    def clean(self):
        cleaned = super().clean()
        branch = (cleaned.get("docs_branch") or "").strip()
        offered = getattr(self, "remote_branches", None)
        if branch and offered is not None and branch not in offered:
            self.add_error("docs_branch", f"{cleaned['docs_repo']} has no branch {branch} ({', '.join(offered)}).")
        cleaned["docs_branch"] = branch
        return cleaned

    def clean_walkthrough_pattern(self):
        pattern = self.cleaned_data["walkthrough_pattern"]
        try:
            re.compile(pattern)
        except re.error as exc:
            raise forms.ValidationError(f"Not a valid regular expression: {exc}.") from None
        return pattern
