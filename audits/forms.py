from django import forms
from django.conf import settings
from django.template.defaultfilters import filesizeformat

from stackbench.formats.walkthrough import NAME_MAX
from stackbench_site.configuration import claude_unavailable_reason
from walkthroughs.models import Backend


class RunOptionsForm(forms.Form):
    version = forms.CharField(
        required=False,
        max_length=100,
        label="Library version",
        help_text="Leave empty for the library's default version.",
    )
    timeout = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=3600,
        label="Timeout per command (seconds)",
        help_text="Leave empty for the default.",
    )

    def options(self) -> dict:
        timeout = self.cleaned_data.get("timeout")
        return {"timeout": timeout} if timeout else {}


class AuditRunForm(RunOptionsForm):
    backend = forms.ChoiceField(choices=Backend.choices, initial=Backend.RULES, widget=forms.RadioSelect)

    def clean_backend(self):
        backend = self.cleaned_data["backend"]
        if backend == Backend.CLAUDE:
            reason = claude_unavailable_reason()
            if reason:
                raise forms.ValidationError(reason)
        return backend


class ValidationRunForm(RunOptionsForm):
    pages = forms.ModelMultipleChoiceField(queryset=None, widget=forms.CheckboxSelectMultiple, label="Doc pages")

    def __init__(self, *args, library, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["pages"].queryset = library.doc_pages.all()
        self.fields["timeout"].label = "Timeout per example (seconds)"


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files under one name; each is checked like a single FileField."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"accept": ".json,.jsonl,.log"}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, (list, tuple)) else [data]
        return [super(MultipleFileField, self).clean(item, initial) for item in files]


class UploadForm(forms.Form):
    # Empty files pass here so the import reports them per file, next to the others.
    files = MultipleFileField(allow_empty_file=True, error_messages={"required": "Choose at least one file to upload."})
    library = forms.CharField(
        required=False,
        max_length=NAME_MAX,
        label="Library for walkthrough exports (optional)",
        widget=forms.TextInput(attrs={"placeholder": "e.g. lancedb"}),
    )

    def clean_files(self):
        files = self.cleaned_data["files"]
        too_big = [upload.name for upload in files if upload.size > settings.STACKBENCH_UPLOAD_MAX_BYTES]
        if too_big:
            raise forms.ValidationError(
                f"Over the {filesizeformat(settings.STACKBENCH_UPLOAD_MAX_BYTES)} limit per file: " + ", ".join(too_big)
            )
        return files
