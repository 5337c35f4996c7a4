from datetime import date, timedelta

import pytest
from django.http import QueryDict
from django.utils import timezone

from audits.forms import (
    AssignmentForm,
    GapApiFilterForm,
    GapFilterForm,
    ProblemApiFilterForm,
    ProblemFilterForm,
    RunApiFilterForm,
    RunFilterForm,
    ShareForm,
)
from audits.models import Lifecycle, Problem, RunKind, RunStatus, TriageState
from stackbench.formats.walkthrough import GAP_SEVERITY, GAP_TYPES
from stackbench_site.queries import MAX_ID, QueryRefused
from tests.builders import KV_GAPS, make_user


def read(form_class, query: str):
    return form_class(QueryDict(query)).for_page()


def choices(form_class, name) -> list[str]:
    return [value for value, _ in form_class.base_fields[name].choices]


def test_the_page_and_the_api_take_the_vocabulary_the_models_define():
    assert choices(ProblemApiFilterForm, "triage_state") == TriageState.values
    assert choices(ProblemFilterForm, "state") == ["active", *TriageState.values]
    assert choices(ProblemApiFilterForm, "lifecycle") == Lifecycle.values
    assert choices(ProblemFilterForm, "lifecycle") == ["new_or_regressed", *Lifecycle.values]
    assert choices(RunApiFilterForm, "kind") == choices(RunFilterForm, "kind") == RunKind.values
    assert choices(RunApiFilterForm, "status") == RunStatus.values
    assert choices(GapApiFilterForm, "gap_type") == choices(GapFilterForm, "type") == list(GAP_TYPES)
    assert choices(GapApiFilterForm, "severity") == list(GAP_SEVERITY.names)


def test_the_api_form_is_the_page_form_under_the_api_names():
    assert issubclass(ProblemApiFilterForm, ProblemFilterForm) and issubclass(GapApiFilterForm, GapFilterForm)
    api = ProblemApiFilterForm(QueryDict("triage_state=wont_fix&library=SQLite3"))
    assert api.is_valid() and (api.cleaned_data["state"], api.cleaned_data["library"]) == ("wont_fix", "SQLite3")
    gaps = GapApiFilterForm(QueryDict("run_id=7&gap_type=clarity"))
    assert gaps.is_valid() and (gaps.cleaned_data["run"], gaps.cleaned_data["type"]) == (7, "clarity")
    assert set(ProblemApiFilterForm.base_fields) == {"library", "kind", "triage_state", "lifecycle", "severity"}
    assert set(GapApiFilterForm.base_fields) == {"library", "run_id", "gap_type", "severity"}


def test_a_page_ignores_a_value_its_form_does_not_take():
    form = read(ProblemFilterForm, "library=abc&kind=bogus&state=nonsense&assignee=-3&sort=up&walkthrough=0")
    assert {name: form.cleaned_data.get(name) for name in ("library", "kind", "state", "assignee", "walkthrough")} == {
        "library": None,
        "kind": None,
        "state": None,
        "assignee": None,
        "walkthrough": None,
    }
    assert form.ordering() == "severity"
    assert form.params()["library"] == "abc", "the page's controls show what was asked"


def test_the_problem_list_opens_on_active_problems_and_an_empty_state_asks_for_any():
    assert read(ProblemFilterForm, "").cleaned_data["state"] == "active"
    assert read(ProblemFilterForm, "state=").cleaned_data["state"] == ""
    assert read(ProblemFilterForm, "state=+fixed+").cleaned_data["state"] == "fixed"


@pytest.mark.parametrize("query", [f"library={MAX_ID + 1}", "walkthrough=99999999999999999999999"])
def test_a_page_refuses_an_id_too_large_and_names_the_parameter(query):
    with pytest.raises(QueryRefused, match=f"The {query.split('=')[0]} parameter"):
        read(ProblemFilterForm, query)
    with pytest.raises(QueryRefused):
        read(GapFilterForm, query)


def test_the_assignee_is_me_nobody_or_an_id_and_refused_when_too_large():
    assert read(ProblemFilterForm, "assignee=me").cleaned_data["assignee"] == "me"
    assert read(ProblemFilterForm, "assignee=none").cleaned_data["assignee"] == "none"
    assert read(ProblemFilterForm, "assignee=12").cleaned_data["assignee"] == 12
    with pytest.raises(QueryRefused, match="assignee"):
        read(ProblemFilterForm, f"assignee={MAX_ID + 1}")


@pytest.mark.django_db
def test_an_unknown_value_of_an_exact_filter_matches_nothing_on_the_page(kv_walkthrough_path, import_audit):
    from audits.importing import import_paths

    import_paths([kv_walkthrough_path], library_name="sqlite3")
    import_audit(gaps=KV_GAPS)
    assert read(ProblemFilterForm, "severity=critical").filter(Problem.objects.all()).exists()
    assert not read(ProblemFilterForm, "severity=dire").filter(Problem.objects.all()).exists()
    assert read(ProblemFilterForm, "kind=dire").filter(Problem.objects.all()).exists(), "kind is ignored instead"
    gaps = read(GapFilterForm, "type=typo")
    assert gaps.matches_nothing() and not gaps.matches_nothing("severity", "state", "lifecycle")


@pytest.mark.django_db
def test_an_assignment_keeps_names_nobody_or_a_person():
    person = make_user("pat")
    people = type(person).objects.all()
    assert read(AssignmentForm, "").keeps_assignee()
    assert read(AssignmentForm, f"assignee={person.pk}").person(people) == person
    for nobody in ("assignee=", "assignee=abc", "assignee=424242"):
        form = read(AssignmentForm, nobody)
        assert not form.keeps_assignee() and form.person(people) is None
    assert read(AssignmentForm, "problem=3&problem=x&problem=5").cleaned_data["problem"] == [3, 5]
    with pytest.raises(QueryRefused, match="problem"):
        read(AssignmentForm, f"problem={MAX_ID + 1}")


def test_a_share_link_expires_after_its_days_or_never():
    assert read(ShareForm, "days=").expires_at() is None
    assert read(ShareForm, "days=0").expires_at() is None
    assert read(ShareForm, "days=x").expires_at() is None
    assert read(ShareForm, "days=7").expires_at() > timezone.now() + timedelta(days=6)
    assert read(ShareForm, "days=1000000").expires_at().year > 4000
    with pytest.raises(QueryRefused, match="The days parameter"):
        read(ShareForm, f"days={(date.max - date.today()).days + 1}")
