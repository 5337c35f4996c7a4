from datetime import date, timedelta

from django import forms
from django.conf import settings
from django.db.models import Q
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from audits.models import Lifecycle, RunKind, RunStatus, TriageState
from stackbench.formats.results import EXAMPLE_SEVERITY
from stackbench.formats.walkthrough import GAP_SEVERITY, GAP_TYPES, NAME_MAX
from stackbench_site.configuration import claude_unavailable_reason
from stackbench_site.queries import MAX_ID, IdField, IdListField, QueryForm
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


class PagesAskedForm(QueryForm):
    """The doc pages a link to the validation form ticks (?page=<id>, repeated)."""

    page = IdListField()


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


def _choices(values) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


# A problem is an audit gap or a failing example: its severity is on either scale.
PROBLEM_SEVERITIES = _choices(dict.fromkeys((*GAP_SEVERITY.names, *EXAMPLE_SEVERITY.names)))
NEW_OR_REGRESSED = ("new_or_regressed", "new or regressed")


class LibraryNameField(forms.CharField):
    """A library by its name (any case): how the API names one, where a page picks one from a list by id."""

    def __init__(self, **kwargs):
        super().__init__(required=False, **kwargs)


class RunFilterForm(QueryForm):
    library = IdField()
    kind = forms.ChoiceField(choices=RunKind.choices, required=False)
    status = forms.ChoiceField(choices=RunStatus.choices, required=False)

    library_lookup = "library_id"

    def filter(self, runs):
        lookups = {"library": self.library_lookup, "kind": "kind", "status": "status"}
        return runs.filter(
            **{lookup: self.cleaned_data[name] for name, lookup in lookups.items() if self.cleaned_data.get(name)}
        )


class RunApiFilterForm(RunFilterForm):
    library = LibraryNameField()

    library_lookup = "library__name__iexact"


PROBLEM_SORTS = {
    "severity": ("-rank", "-last_seen_at"),
    "newest": ("-last_seen_at",),
    "oldest": ("first_seen_at",),
    "sightings": ("-sightings", "-rank"),
}


class ProblemFilterForm(QueryForm):
    library = IdField()
    kind = forms.ChoiceField(choices=RunKind.choices, required=False)
    state = forms.ChoiceField(choices=[("active", "open or confirmed"), *TriageState.choices], required=False)
    lifecycle = forms.ChoiceField(choices=[NEW_OR_REGRESSED, *Lifecycle.choices], required=False)
    severity = forms.ChoiceField(choices=PROBLEM_SEVERITIES, required=False)
    # me, none (nobody) or a person's id
    assignee = forms.CharField(required=False)
    walkthrough = IdField()
    q = forms.CharField(required=False)
    sort = forms.ChoiceField(choices=_choices(PROBLEM_SORTS), required=False)

    # The list opens on what still needs attention; an empty state asks for any.
    absent = {"state": "active"}
    exact = ("severity",)
    library_lookup = "library_id"

    def clean_assignee(self):
        assignee = self.cleaned_data["assignee"]
        return assignee if assignee in ("", "me", "none") else IdField().clean(assignee)

    def filter(self, problems, user=None):
        if self.matches_nothing():
            return problems.none()
        wanted = self.cleaned_data
        if wanted.get("library"):
            problems = problems.filter(**{self.library_lookup: wanted["library"]})
        if wanted.get("kind"):
            problems = problems.filter(kind=wanted["kind"])
        if wanted.get("state") == "active":
            problems = problems.open()
        elif wanted.get("state"):
            problems = problems.filter(triage_state=wanted["state"])
        if wanted.get("lifecycle") == NEW_OR_REGRESSED[0]:
            problems = problems.new_or_regressed()
        elif wanted.get("lifecycle"):
            problems = problems.filter(lifecycle=wanted["lifecycle"])
        if wanted.get("severity"):
            problems = problems.filter(severity=wanted["severity"])
        if wanted.get("assignee") == "me":
            problems = problems.assigned_to(user)
        elif wanted.get("assignee") == "none":
            problems = problems.filter(assignee__isnull=True)
        elif wanted.get("assignee"):
            problems = problems.filter(assignee_id=wanted["assignee"])
        if wanted.get("walkthrough"):
            problems = problems.for_walkthrough(wanted["walkthrough"])
        if wanted.get("q"):
            problems = problems.filter(Q(title__icontains=wanted["q"]) | Q(step_title__icontains=wanted["q"]))
        return problems

    def ordering(self) -> str:
        """The sort asked for, else the most severe first."""
        return self.cleaned_data.get("sort") or "severity"


class ProblemApiFilterForm(ProblemFilterForm):
    """The page's filters, with a library by name and the state as triage_state, without the page's shortcuts
    (active, new_or_regressed) and its people and text filters."""

    library = LibraryNameField()
    triage_state = forms.ChoiceField(choices=TriageState.choices, required=False)
    lifecycle = forms.ChoiceField(choices=Lifecycle.choices, required=False)
    state = assignee = walkthrough = q = sort = None

    absent = {}
    aliases = {"triage_state": "state"}
    library_lookup = "library__name__iexact"


GAP_SORTS = ("newest", "oldest", "severity", "step")


class GapFilterForm(QueryForm):
    """The findings list: audit gaps, or failing examples when kind is validation."""

    kind = forms.ChoiceField(choices=RunKind.choices, required=False)
    library = IdField()
    walkthrough = IdField()
    page_id = IdField()
    type = forms.ChoiceField(choices=_choices(GAP_TYPES), required=False)
    severity = forms.ChoiceField(choices=PROBLEM_SEVERITIES, required=False)
    run = IdField()
    step = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    q = forms.CharField(required=False)
    sort = forms.ChoiceField(choices=_choices(GAP_SORTS), required=False)
    state = forms.ChoiceField(choices=TriageState.choices, required=False)
    lifecycle = forms.ChoiceField(choices=[NEW_OR_REGRESSED, *Lifecycle.choices], required=False)
    assignee = IdField()

    exact = ("type", "severity", "state", "lifecycle")
    library_lookup = "run__library_id"

    def wants_examples(self) -> bool:
        return self.cleaned_data.get("kind") == RunKind.VALIDATION

    def ordering(self) -> str:
        """The sort asked for, else the newest first."""
        return self.cleaned_data.get("sort") or "newest"

    def filter_gaps(self, gaps):
        if self.matches_nothing():
            return gaps.none()
        wanted = self.cleaned_data
        if wanted.get("library"):
            gaps = gaps.filter(**{self.library_lookup: wanted["library"]})
        if wanted.get("walkthrough"):
            gaps = gaps.for_walkthrough(wanted["walkthrough"])
        if wanted.get("type"):
            gaps = gaps.of_type(wanted["type"])
        if wanted.get("severity"):
            gaps = gaps.of_severity(wanted["severity"])
        if wanted.get("run"):
            gaps = gaps.filter(run_id=wanted["run"])
        if wanted.get("step"):
            gaps = gaps.filter(step_number=wanted["step"])
        if wanted.get("q"):
            gaps = gaps.search(wanted["q"])
        return gaps.filter(**self._problem_lookups())

    def filter_examples(self, results):
        if self.matches_nothing("severity", "state", "lifecycle"):
            return results.none()
        wanted = self.cleaned_data
        if wanted.get("library"):
            results = results.filter(document__run__library_id=wanted["library"])
        if wanted.get("page_id"):
            results = results.filter(document__doc_page_id=wanted["page_id"])
        if wanted.get("severity"):
            results = results.filter(severity=wanted["severity"])
        if wanted.get("run"):
            results = results.filter(document__run_id=wanted["run"])
        if wanted.get("q"):
            results = results.search(wanted["q"])
        return results.filter(**self._problem_lookups())

    def _problem_lookups(self) -> dict:
        """The problem-side filters (triage state, lifecycle, assignee) of either list."""
        wanted, lookups = self.cleaned_data, {}
        if wanted.get("state"):
            lookups["problem__triage_state"] = wanted["state"]
        if wanted.get("lifecycle") == NEW_OR_REGRESSED[0]:
            lookups["problem__lifecycle__in"] = [Lifecycle.NEW, Lifecycle.REGRESSED]
        elif wanted.get("lifecycle"):
            lookups["problem__lifecycle"] = wanted["lifecycle"]
        if wanted.get("assignee"):
            lookups["problem__assignee_id"] = wanted["assignee"]
        return lookups


class GapApiFilterForm(GapFilterForm):
    """The page's gap filters, with a library by name and the run and type as run_id and gap_type, without the
    page's other filters."""

    library = LibraryNameField()
    run_id = IdField()
    gap_type = forms.ChoiceField(choices=_choices(GAP_TYPES), required=False)
    severity = forms.ChoiceField(choices=_choices(GAP_SEVERITY.names), required=False)
    kind = walkthrough = page_id = type = run = step = q = sort = state = lifecycle = assignee = None

    aliases = {"run_id": "run", "gap_type": "type"}
    library_lookup = "run__library__name__iexact"


class AssignmentForm(QueryForm):
    """The problems a triage change is for (ticked in the list) and whom they go to: a person's id; keep (or no
    assignee given) leaves each with whoever has it; anything else is nobody."""

    problem = IdListField()
    assignee = forms.CharField(required=False)

    absent = {"assignee": "keep"}

    def clean_assignee(self):
        assignee = self.cleaned_data["assignee"]
        return assignee if assignee in ("", "keep") else IdField().clean(assignee)

    def keeps_assignee(self) -> bool:
        return self.cleaned_data.get("assignee") == "keep"

    def person(self, people):
        """The person among people, or None for nobody."""
        assignee = self.cleaned_data.get("assignee")
        return people.filter(pk=assignee).first() if isinstance(assignee, int) else None


def _days_a_date_can_go() -> int:
    return (date.max - timezone.now().date()).days - 1


class ShareForm(QueryForm):
    # Empty (or not a number of days) for a link that never expires.
    days = forms.IntegerField(required=False, min_value=1, max_value=_days_a_date_can_go)

    def expires_at(self):
        days = self.cleaned_data.get("days")
        return timezone.now() + timedelta(days=days) if days else None
