"""The inputs' models: libraries and their docs checkout, walkthroughs stored from exports, doc pages stored from
analyses, and presented walkthroughs with the repositories they may name."""

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from stackbench.formats.walkthrough import ExtractionAnalysis, WalkthroughExport
from stackbench.lib.git import git
from stackbench.lib.snippets import code_hash
from tests.builders import BASE_DIR, REVIEW, walkthrough_export
from walkthroughs.models import (
    DocPage,
    Library,
    PresentedWalkthrough,
    PresentError,
    Walkthrough,
    content_hash,
    repository_refusal,
)

pytestmark = pytest.mark.django_db

STEPS = [
    ("Install", "Run:\n\n```bash\npip install kv\n```", "1. Run: pip install kv"),
    ("Open", "```python\n# open it\nimport kv\ndb = kv.open()\n```\n\n```python\n\n```", "1. Create app.py"),
    ("Read", "Nothing to run.", "1. Read"),
]


def test_a_content_hash_ignores_key_order_and_whitespace_but_not_values():
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash(json.loads('{ "b" : [1,2], "a":1 }'))
    assert content_hash({"a": 1}) != content_hash({"a": 2})
    assert content_hash({"text": "é"}) == content_hash({"text": "\u00e9"})


def test_a_library_is_found_whatever_the_case_and_a_version_fills_only_an_empty_default():
    created = Library.for_name("Toolz")
    assert Library.for_name("toolz", "0.12").pk == created.pk
    assert Library.objects.get().default_version == "0.12"
    Library.for_name("TOOLZ", "0.13")
    assert Library.objects.get().default_version == "0.12"
    assert Library.for_name("toolz").package_name == "Toolz"
    created.pypi_name = "toolz-dist"
    assert created.package_name == "toolz-dist"


def test_a_sync_is_pending_from_its_request_until_it_finishes_or_fails():
    library = Library.objects.create(name="kv")
    assert not library.sync_pending
    library.request_sync()
    assert Library.objects.get().sync_pending, "the request is saved"
    library.synced_at = library.sync_requested_at - timedelta(minutes=1)
    assert library.sync_pending, "a sync that finished before the request does not count"
    library.synced_at = library.sync_requested_at + timedelta(seconds=1)
    assert not library.sync_pending
    library.synced_at = None
    library.sync_report = {"error_at": (library.sync_requested_at + timedelta(seconds=1)).isoformat()}
    assert not library.sync_pending


def test_relative_images_of_a_page_are_served_from_the_docs_folder_of_its_library():
    library = Library.objects.create(name="kv", docs_repo="/srv/docs")
    root = reverse("library_docs_file", args=[library.pk, "-"]).removesuffix("-")
    assert library.docs_asset_base("guide/start/intro.md") == root + "guide/start/"
    assert library.docs_asset_base("index.md") == root
    assert library.docs_asset_base("") == ""
    assert Library.objects.create(name="nodocs").docs_asset_base("index.md") == ""


def test_a_git_url_is_checked_out_in_the_workers_folder_and_a_folder_is_used_where_it_is(settings):
    remote = Library.objects.create(name="remote", docs_repo="https://example.org/docs.git", docs_folder="docs")
    assert remote.checkout_path == Path(settings.STACKBENCH_CHECKOUTS_DIR) / f"library-{remote.pk}"
    assert remote.docs_path == remote.checkout_path / "docs"
    local = Library.objects.create(name="local", docs_repo="/srv/docs")
    assert local.checkout_path == Path("/srv/docs") and local.docs_path == Path("/srv/docs")
    assert Library.objects.create(name="none").checkout_path is None


def test_a_run_starting_now_reads_the_checkouts_head_else_the_last_synced_commit(tmp_path):
    repo = tmp_path / "docs"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "index.md").write_text("# Docs\n")
    git(repo, "add", "index.md")
    git(repo, "-c", "user.name=D", "-c", "user.email=d@example.com", "commit", "-q", "-m", "Docs")
    head = git(repo, "rev-parse", "HEAD").strip()
    library = Library.objects.create(name="kv", docs_repo=str(repo), docs_commit="synced-earlier")
    assert library.current_docs_commit() == head
    library.docs_repo = str(tmp_path / "gone")
    assert library.current_docs_commit() == "synced-earlier"
    assert Library.objects.create(name="nodocs", docs_commit="abc").current_docs_commit() == "abc"


def store(export, walkthrough_id="wt_kv", library=None):
    library = library or Library.for_name("kv")
    return Walkthrough.store_export(walkthrough_id, library, WalkthroughExport.model_validate(export), export)


def test_an_export_is_stored_with_its_steps_in_display_order_and_their_code_blocks():
    export = walkthrough_export(STEPS, title="Key-value store", first_order=1)
    export["steps"].reverse()
    walkthrough, outcome = store(export)
    assert outcome == "created" and walkthrough.has_steps and walkthrough.title == "Key-value store"
    assert walkthrough.original_doc_path == "docs/tutorial.md" and walkthrough.estimated_minutes == 5
    assert [(s.position, s.display_order, s.title) for s in walkthrough.steps.all()] == [
        (1, 1, "Install"),
        (2, 2, "Open"),
        (3, 3, "Read"),
    ]
    opening = walkthrough.steps.get(position=2)
    assert opening.operations_for_agent == "1. Create app.py" and opening.introduction_for_agent == "This step: Open."
    assert set(opening.snippets.values_list("code_hash", flat=True)) == {code_hash("import kv\ndb = kv.open()")}
    assert not walkthrough.steps.get(position=3).snippets.exists()
    assert json.loads(walkthrough.export_json()) == export


def test_the_same_export_again_is_unchanged_and_a_changed_one_keeps_the_previous_as_a_revision():
    first, _ = store(walkthrough_export(STEPS))
    reordered = json.loads(json.dumps(walkthrough_export(STEPS), sort_keys=True))
    assert store(reordered) == (first, "unchanged")
    assert not first.revisions.exists()
    walkthrough, outcome = store(walkthrough_export(STEPS[:2], title="Shorter"))
    assert outcome == "updated" and walkthrough.pk == first.pk and walkthrough.steps.count() == 2
    revision = walkthrough.revisions.get()
    assert revision.content_hash == first.content_hash and len(revision.source["steps"]) == 3
    assert walkthrough.content_hash == content_hash(walkthrough_export(STEPS[:2], title="Shorter"))


def test_a_placeholder_known_from_results_is_created_by_its_export_without_a_revision():
    library = Library.for_name("kv")
    placeholder = Walkthrough.placeholder("wt_kv", library, "")
    assert placeholder.title == "wt_kv" and not placeholder.has_steps
    assert Walkthrough.placeholder("wt_kv", library, "Other title").pk == placeholder.pk
    walkthrough, outcome = store(walkthrough_export(STEPS), library=library)
    assert (walkthrough.pk, outcome) == (placeholder.pk, "created") and not walkthrough.revisions.exists()


ANALYSIS = {
    "page": "guide/intro.md",
    "library": "toolz",
    "version": "0.12.1",
    "examples": [
        {
            "library": "toolz",
            "code": "from toolz import pipe\nprint(pipe(1, str))",
            "line": 12,
            "section_hierarchy": ["Intro"],
        },
        {
            "library": "toolz",
            "code": "$ pip install toolz",
            "language": "bash",
            "is_executable": False,
            "skip_reason": "a shell line",
        },
    ],
    "processed_at": "2026-11-01T10:00:00Z",
    "setup": [{"code": "import os"}],
}


def test_a_doc_page_stored_from_an_analysis_reads_back_as_the_same_analysis():
    library = Library.for_name("toolz")
    command = {"command": "toolz-run deploy.py", "program": "toolz-run", "files": ["deploy.py"], "line": 4}
    examples = [{**ANALYSIS["examples"][0], "builds_on_earlier": True}, *ANALYSIS["examples"][1:]]
    analysis = ExtractionAnalysis.model_validate(
        {**ANALYSIS, "examples": examples, "file_commands": [command], "docs_file_commands": [command]}
    )
    page, outcome = DocPage.store_analysis(library, analysis, None, docs_commit="abc123")
    assert outcome == "created" and page.examples.count() == 2 and page.docs_commit == "abc123"
    assert page.analysis().model_dump(mode="json") == analysis.model_dump(mode="json")


def test_when_a_page_was_extracted_does_not_change_it_and_what_it_says_does():
    library = Library.for_name("toolz")
    page, _ = DocPage.store_analysis(library, ExtractionAnalysis.model_validate(ANALYSIS), None, docs_commit="abc")
    later = {**ANALYSIS, "processed_at": "2026-11-02T10:00:00Z"}
    assert DocPage.store_analysis(library, ExtractionAnalysis.model_validate(later), None)[1] == "unchanged"
    changed = {**ANALYSIS, "examples": ANALYSIS["examples"][:1]}
    page, outcome = DocPage.store_analysis(library, ExtractionAnalysis.model_validate(changed), None)
    assert outcome == "updated" and page.examples.count() == 1 and page.docs_commit == "abc", "kept when not given"


def test_a_page_without_a_version_is_validated_at_its_librarys_default():
    library = Library.objects.create(name="toolz", default_version="0.11")
    analysis = ExtractionAnalysis.model_validate({**ANALYSIS, "version": None})
    page, _ = DocPage.store_analysis(library, analysis, ANALYSIS)
    assert page.version == "" and page.analysis().version == "0.11" and page.source == ANALYSIS


def test_no_repository_may_hold_the_apps_own_files_or_lie_outside_the_roots(settings, tmp_path):
    settings.STACKBENCH_REPO_ROOTS = [str(tmp_path)]
    assert "holds Stackbench's own files" in repository_refusal(BASE_DIR)
    assert "holds Stackbench's own files" in repository_refusal(BASE_DIR.parent)
    assert "holds Stackbench's own files" in repository_refusal(settings.VAR_DIR)
    assert "is not under the repository roots of this server" in repository_refusal("/usr/share")
    (tmp_path / "docs").mkdir()
    assert repository_refusal(tmp_path / "docs") is None
    assert repository_refusal(Path(settings.STACKBENCH_CHECKOUTS_DIR) / "library-1") is None
    (tmp_path / "docs" / "escape").symlink_to("/usr/share")
    assert "is not under the repository roots" in repository_refusal(tmp_path / "docs" / "escape")


@pytest.fixture
def repo_roots(settings, symposium_repo):
    settings.STACKBENCH_REPO_ROOTS = [str(symposium_repo.parent)]
    return symposium_repo


def test_presenting_refuses_repositories_outside_the_allowed_roots_and_bad_walkthroughs(repo_roots, tmp_path, settings):
    with pytest.raises(PresentError, match="is not under the repository roots of this server"):
        PresentedWalkthrough.present({"introduction": "x"}, str(tmp_path))
    (repo_roots.parent / "plain").mkdir(exist_ok=True)
    with pytest.raises(PresentError, match="is not a git repository"):
        PresentedWalkthrough.present({"introduction": "x"}, str(repo_roots.parent / "plain"))
    with pytest.raises(PresentError, match="expected markdown text or an object"):
        PresentedWalkthrough.present({"introduction": [{"nope": 1}]}, str(repo_roots))


def test_a_presented_walkthrough_keeps_its_normalized_form_and_the_markdown_as_given(repo_roots):
    from_json = PresentedWalkthrough.present(json.dumps(REVIEW), str(repo_roots))
    assert from_json.source_format == "json" and from_json.source_text == ""
    assert from_json.walkthrough().model_dump(mode="json", exclude_none=True) == from_json.source
    markdown = "# Hello\0docs\n\nSome words.\n"
    presented = PresentedWalkthrough.present(markdown, str(repo_roots / "src" / ".."))
    assert presented.source_format == "markdown" and presented.source_text == "# Hello\ufffddocs\n\nSome words.\n"
    assert presented.title == "Hello\ufffddocs" and presented.repo_path == str(repo_roots)


def test_a_picked_location_is_kept_and_clearing_archives_once(repo_roots):
    presented = PresentedWalkthrough.present(REVIEW, str(repo_roots))
    presented.choose_location("highlights.2", "src/auth.py:9")
    presented.choose_location("highlights.5", "docs/auth.md:6")
    assert PresentedWalkthrough.objects.get().chosen_locations == {
        "highlights.2": "src/auth.py:9",
        "highlights.5": "docs/auth.md:6",
    }
    assert list(PresentedWalkthrough.objects.current()) == [presented]
    presented.clear()
    cleared_at = PresentedWalkthrough.objects.get().archived_at
    assert cleared_at is not None and not PresentedWalkthrough.objects.current().exists()
    presented.archived_at = cleared_at
    presented.clear()
    assert PresentedWalkthrough.objects.get().archived_at == cleared_at < timezone.now()
