"""From a docs folder in git to runs, gaps and problems, through the dashboard: sync, run everything, change the
docs, run again, and see the docs diff beside what appeared and went away."""

import re
import subprocess
from pathlib import Path

import pytest
from django.urls import reverse

from audits.models import Batch, Problem, Run
from stackbench_site.celery import app
from tests.builders import logged_in, make_user
from walkthroughs.models import DocPage, Library, Walkthrough

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

GUIDE = """# sbdemo guide

## Greeting

```python
from sbdemo import greet
print(greet("docs"))
```

## Typos

```python
import sbdemo
print(sbdemo.gret("docs"))
```
"""


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def docs_repo(tmp_path, sample_dir):
    repo = tmp_path / "docs-repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "kv-quickstart.md").write_text((sample_dir / "docs" / "kv-quickstart.md").read_text())
    (repo / "docs" / "guide.md").write_text(GUIDE)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.email=d@example.com", "-c", "user.name=Docs", "add", "-A")
    git(repo, "-c", "user.email=d@example.com", "-c", "user.name=Docs", "commit", "-qm", "docs")
    return repo


@pytest.fixture
def eager(settings, wheelhouse):
    """Tasks run in this process (the worker path has its own tests); the examples install offline."""
    settings.STACKBENCH_FIND_LINKS = [str(wheelhouse)]
    settings.STACKBENCH_NO_INDEX = True
    app.conf.update(task_always_eager=True)
    yield
    app.conf.update(task_always_eager=False)


def test_sync_run_everything_change_the_docs_and_compare(docs_repo, eager):
    team = logged_in(
        make_user(
            "lead",
            "walkthroughs.add_library",
            "walkthroughs.change_library",
            "walkthroughs.manage_library",
            "audits.start_run",
        )
    )
    created = team.post(
        reverse("library_new"),
        {
            "name": "sbdemo",
            "pypi_name": "sbdemo",
            "default_version": "1.0.0",
            "default_backend": "rules",
            "docs_repo": str(docs_repo),
            "docs_folder": "docs",
            "walkthrough_pattern": "quickstart",
        },
    )
    library = Library.objects.get()
    assert created["Location"] == library.get_absolute_url()

    team.post(reverse("library_sync", args=[library.pk]))
    library.refresh_from_db()
    assert library.sync_report["pages"]["created"] == 2 and library.sync_report["walkthroughs"]["created"] == 1
    walkthrough = Walkthrough.objects.get()
    assert walkthrough.original_doc_path == "kv-quickstart.md" and walkthrough.steps.count() == 5
    assert sorted(DocPage.objects.values_list("page", flat=True)) == ["guide.md", "kv-quickstart.md"]
    assert "synced" in team.get(library.get_absolute_url()).content.decode()

    response = team.post(reverse("run_everything", args=[library.pk]))
    batch = Batch.objects.get()
    assert response["Location"] == batch.get_absolute_url()
    assert {(run.kind, run.status) for run in batch.runs.all()} == {("validation", "succeeded"), ("audit", "succeeded")}
    assert all(run.docs_commit == library.docs_commit for run in batch.runs.all())
    page = team.get(batch.get_absolute_url()).content.decode()
    assert "<b>2 / 2</b><span>runs finished</span>" in page
    typo = Problem.objects.get(kind="validation")
    assert typo.title.startswith("AttributeError") and typo.lifecycle == "new"
    assert Problem.objects.filter(kind="audit", gap_type="logical_flow").exists()

    (docs_repo / "docs" / "guide.md").write_text(GUIDE.replace("sbdemo.gret", "sbdemo.greet"))
    git(docs_repo, "-c", "user.email=d@example.com", "-c", "user.name=Docs", "commit", "-qam", "Fix the typo")
    team.post(reverse("library_sync", args=[library.pk]))
    library.refresh_from_db()
    assert library.sync_report["pages"]["updated"] == 1 and library.sync_report["walkthroughs"]["unchanged"] == 1
    team.post(reverse("run_everything", args=[library.pk]))
    validation = Run.objects.validations().newest_first().first()
    assert validation.previous_run is not None and validation.docs_commit != validation.previous_run.docs_commit
    typo.refresh_from_db()
    assert typo.lifecycle == "fixed" and typo.lifecycle_run == validation
    run_page = team.get(validation.get_absolute_url()).content.decode()
    assert "What changed in the docs since run" in run_page and "guide.md" in run_page
    assert "Gone since" in run_page and "AttributeError" in run_page
    node = re.search(r"docs-diff/\?element=docs&amp;node=([0-9a-f]{40})&amp;path=docs/guide.md", run_page).group(1)
    diff = team.get(
        reverse("run_docs_diff", args=[validation.pk]),
        {"element": "docs", "node": node, "path": "docs/guide.md"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert 'aria-label="Diff of docs/guide.md"' in diff and "gret" in diff and 'class="add"' in diff
    missing = team.get(
        reverse("run_docs_diff", args=[validation.pk]), {"node": "", "path": "docs/guide.md"}, HTTP_HX_REQUEST="true"
    )
    assert missing.status_code == 404


def test_sync_without_a_repository_says_what_to_do(eager):
    team = logged_in(make_user("lead", "walkthroughs.manage_library"))
    library = Library.objects.create(name="nodocs")
    followed = team.post(reverse("library_sync", args=[library.pk]), follow=True).content.decode()
    assert "Set the library&#x27;s docs repository first." in followed


def test_the_library_page_follows_a_running_sync_and_reloads_when_it_is_done(db, tmp_path):
    from django.utils import timezone

    viewer = logged_in(make_user("reader"))
    library = Library.objects.create(name="live", docs_repo=str(tmp_path))
    library.request_sync()
    page = viewer.get(library.get_absolute_url()).content.decode()
    assert "syncing…" in page and "not synced yet" not in page and 'hx-trigger="every 2s"' in page
    status = reverse("library_sync_status", args=[library.pk])
    still = viewer.get(status, {"was": "pending"}, HTTP_HX_REQUEST="true")
    assert "syncing…" in still.content.decode() and "HX-Refresh" not in still

    Library.objects.filter(pk=library.pk).update(synced_at=timezone.now(), sync_report={"pages": {"created": 3}})
    done = viewer.get(status, {"was": "pending"}, HTTP_HX_REQUEST="true")
    assert done["HX-Refresh"] == "true", "htmx reloads the page, whose lists are the synced ones now"
    reloaded = viewer.get(library.get_absolute_url()).content.decode()
    assert "3 pages new" in reloaded and 'hx-trigger="every 2s"' not in reloaded


def commit_all(repo, message):
    git(repo, "-c", "user.email=d@example.com", "-c", "user.name=Docs", "add", "-A")
    git(repo, "-c", "user.email=d@example.com", "-c", "user.name=Docs", "commit", "-qm", message)


@pytest.fixture
def served_docs(docs_repo, tmp_path):
    """The docs repository published bare, with a second branch, as a team's remote would be."""
    bare = tmp_path / "served" / "docs.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(docs_repo), str(bare)], check=True)
    git(docs_repo, "checkout", "-q", "-b", "next")
    (docs_repo / "docs" / "next.md").write_text("# Next\n\n```python\nprint('next')\n```\n")
    commit_all(docs_repo, "next page")
    git(docs_repo, "push", "-q", str(bare), "next")
    git(docs_repo, "checkout", "-q", "main")
    return bare


def test_a_docs_repository_by_url_is_cloned_on_sync_and_fetched_on_the_next(
    served_docs, docs_repo, eager, settings, tmp_path
):
    from walkthroughs.sync import sync_docs

    settings.STACKBENCH_CHECKOUTS_DIR = tmp_path / "checkouts"
    lead = logged_in(make_user("lead", "walkthroughs.add_library", "walkthroughs.manage_library"))
    url = f"file://{served_docs}"
    refused = lead.post(
        reverse("library_new"),
        {"name": "remote", "docs_repo": url, "docs_branch": "nope", "docs_folder": "docs", "default_backend": "rules"},
    )
    assert "has no branch nope (main, next)" in refused.content.decode().replace("&#x27;", "'")
    unreachable = lead.post(
        reverse("library_new"), {"name": "remote", "docs_repo": "file:///no/such.git", "default_backend": "rules"}
    )
    assert "file:///no/such.git cannot be reached" in unreachable.content.decode()
    lead.post(
        reverse("library_new"),
        {
            "name": "remote",
            "docs_repo": url,
            "docs_branch": "next",
            "docs_folder": "docs",
            "default_backend": "rules",
            "walkthrough_pattern": "quickstart",
        },
    )
    library = Library.objects.get(name="remote")
    sync_docs(library)
    library.refresh_from_db()
    assert library.sync_report["pages"]["created"] == 3, "kv-quickstart, guide and the next branch's page"
    assert library.checkout_path == tmp_path / "checkouts" / f"library-{library.pk}"
    first = library.docs_commit

    git(docs_repo, "checkout", "-q", "next")
    (docs_repo / "docs" / "next.md").write_text("# Next\n\n```python\nprint('changed')\n```\n")
    commit_all(docs_repo, "change the next page")
    git(docs_repo, "push", "-q", str(served_docs), "next")
    sync_docs(library)
    library.refresh_from_db()
    assert library.docs_commit != first and library.sync_report["pages"]["updated"] == 1
    assert library.current_docs_commit() == library.docs_commit


def test_a_docs_repository_is_fetched_from_a_git_daemon(served_docs, eager, settings, tmp_path):
    import socket
    import time

    from walkthroughs.sync import sync_docs

    settings.STACKBENCH_CHECKOUTS_DIR = tmp_path / "checkouts"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    daemon = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            f"--base-path={served_docs.parent}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(served_docs.parent),
        ],
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(50):
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        library = Library.objects.create(
            name="daemon", docs_repo=f"git://127.0.0.1:{port}/docs.git", docs_folder="docs"
        )
        sync_docs(library)
        library.refresh_from_db()
        assert library.sync_report["pages"]["created"] == 2 and library.docs_commit
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


def test_no_repository_may_hold_the_apps_own_files_or_lie_outside_the_roots(db):
    import os
    import shutil
    import tempfile

    from tests.builders import BASE_DIR, stackbench
    from walkthroughs.sync import SyncError, sync_docs

    lead = logged_in(make_user("lead", "walkthroughs.add_library"))
    outside = Path(tempfile.mkdtemp(prefix="stackbench-outside-"))
    try:
        git(outside, "init", "-q")
        for repo, reason in (
            (BASE_DIR, "holds Stackbench&#x27;s own files"),
            (outside, "is not under the repository roots"),
        ):
            answer = lead.post(
                reverse("library_new"),
                {"name": "sneaky", "docs_repo": str(repo), "default_backend": "rules", "walkthrough_pattern": "x"},
            ).content.decode()
            assert reason in answer and not Library.objects.filter(name="sneaky").exists()
    finally:
        shutil.rmtree(outside)
    with pytest.raises(SyncError, match="holds Stackbench's own files"):
        sync_docs(Library.objects.create(name="direct", docs_repo=str(BASE_DIR)))
    refused = stackbench("user", "x", "--role", "viewer", env={**os.environ, "STACKBENCH_REPO_ROOTS": "/"})
    assert refused.returncode != 0 and "STACKBENCH_REPO_ROOTS includes /, which holds Stackbench" in refused.stderr
