import pytest
from django.urls import reverse

from audits.importing import import_paths
from tests.builders import KV_GAPS, count_queries, logged_in, make_user
from walkthroughs.models import Library, Walkthrough

pytestmark = pytest.mark.django_db


@pytest.fixture
def kv(kv_walkthrough_path):
    import_paths([kv_walkthrough_path], library_name="sqlite3")
    return Walkthrough.objects.get()


def test_pages_need_a_login(client, kv):
    for url in (reverse("home"), reverse("library", args=[kv.library_id]), reverse("walkthrough", args=[kv.pk])):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_home_lists_libraries_with_open_gaps_recent_runs_and_a_trend(viewer_client, kv, import_audit, sample_dir):
    import_audit(gaps=KV_GAPS[:1], started="2026-11-01T10:00:00Z")
    import_audit(gaps=KV_GAPS, started="2026-11-02T10:00:00Z")
    import_paths([sample_dir / "extraction"])
    page = viewer_client.get(reverse("home")).content.decode()
    assert "sqlite3" in page and "toolz" in page
    assert "1 critical" in page and "1 warning" in page
    assert 'class="sparkline"' in page and "Audit gaps: 1, 2; failing examples: none" in page
    assert page.count('<polyline class="gaps"') == 1, "audit gaps are one series"


def test_home_with_nothing_says_what_to_do(viewer_client):
    assert "No libraries yet." in viewer_client.get(reverse("home")).content.decode()


def test_the_library_lists_walkthroughs_and_pages_with_their_last_results_and_filters(
    viewer_client, kv, import_audit, sample_dir
):
    import_audit(gaps=KV_GAPS)
    import_paths([sample_dir / "extraction"], library_name="sqlite3")
    url = reverse("library", args=[kv.library_id])
    page = viewer_client.get(url).content.decode()
    assert "A key-value store with sqlite3" in page and "toolz_intro.md" in page and "never validated" in page
    filtered = viewer_client.get(url, {"q": "toolz"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="library-items")
    body = filtered.content.decode()
    assert body.lstrip().startswith('<div id="library-items">') and "toolz_intro.md" in body
    assert "A key-value store" not in body
    never = viewer_client.get(url, {"state": "never"}).content.decode()
    assert "dateutil_parsing.md" in never and "A key-value store with sqlite3</a>" not in never


def test_the_walkthrough_page_renders_steps_gaps_and_the_timeline(viewer_client, kv, import_audit):
    first = import_audit(gaps=KV_GAPS[:1], started="2026-11-01T10:00:00Z")
    second = import_audit(gaps=KV_GAPS, started="2026-11-02T10:00:00Z", completed=4)
    page = viewer_client.get(reverse("walkthrough", args=[kv.pk])).content.decode()
    assert '<pre class="highlight"><code class="language-python">' in page
    assert "<code>seed.csv</code> is used here" in page
    assert f'title="Run #{second.pk}, step 3: 1 gap(s), worst critical"' in page
    assert f'title="Run #{second.pk}, step 4: 1 gap(s), worst warning"' in page
    assert f'title="Run #{first.pk}, step 4: passed"' in page
    assert f'title="Run #{second.pk}, step 5: not reached"' in page
    assert f'first in <a href="/runs/{first.pk}/">#{first.pk}</a>' in page and "in 2 runs" in page


def test_markdown_cannot_inject_script(viewer_client, make_walkthrough):
    path = make_walkthrough(
        [("Evil", "<script>alert(1)</script>\n\n[x](javascript:alert(1))\n\n<img src=x onerror=alert(1)>", "")],
        name="wt_evil",
        title="<b>bold</b>",
    )
    import_paths([path])
    page = viewer_client.get(reverse("walkthrough", args=[Walkthrough.objects.get().pk])).content.decode()
    assert "<script>alert" not in page and "onerror=alert" not in page.replace("&lt;img src=x onerror=alert(1)&gt;", "")
    assert 'href="javascript:' not in page and "&lt;b&gt;bold&lt;/b&gt;" in page


def test_the_doc_page_shows_examples_and_their_latest_results(viewer_client, sample_dir, tmp_path):
    from stackbench.formats.results import ValidationResult
    from stackbench.lib.jsonfiles import write_model

    import_paths([sample_dir / "extraction"])
    write_model(
        tmp_path / "toolz_intro_validation.json",
        ValidationResult(
            page="toolz_intro.md",
            library="toolz",
            version="0.12.1",
            validation_timestamp="2026-11-01T10:00:00Z",
            results=[
                {
                    "example_index": 3,
                    "status": "failure",
                    "severity": "error",
                    "code": "from toolz import pipee",
                    "error_message": "ImportError: cannot import name 'pipee'",
                    "suggestions": "did you mean `pipe`?",
                }
            ],
        ),
    )
    import_paths([tmp_path])
    library = Library.objects.get(name="toolz")
    page = viewer_client.get(reverse("doc_page", args=[library.doc_pages.get().pk])).content.decode()
    assert "cannot import name &#x27;pipee&#x27;" in page and "Not validated yet." in page
    assert "History:" not in page, "one run is no history yet"

    fixed = ValidationResult.model_validate_json((tmp_path / "toolz_intro_validation.json").read_text())
    fixed.validation_timestamp = "2026-11-02T10:00:00Z"
    fixed.results[0].status, fixed.results[0].severity = "success", None
    (tmp_path / "later").mkdir()
    write_model(tmp_path / "later" / "toolz_intro_validation.json", fixed)
    import_paths([tmp_path / "later"])
    page = viewer_client.get(reverse("doc_page", args=[library.doc_pages.get().pk])).content.decode()
    history = page[page.index("History:") :].split("</p>")[0]
    assert history.index("status-failure") < history.index("status-success"), "oldest first"


def test_list_pages_take_the_same_number_of_queries_whatever_the_rows(viewer_client, kv, import_audit, sample_dir):
    import_paths([sample_dir / "extraction"], library_name="sqlite3")
    urls = [reverse("home"), reverse("library", args=[kv.library_id]), reverse("walkthrough", args=[kv.pk])]

    def add_runs(days):
        for day in days:
            import_audit(gaps=KV_GAPS, started=f"2026-10-{day:02d}T10:00:00Z")

    add_runs(range(1, 3))
    few = [count_queries(viewer_client, url) for url in urls]
    add_runs(range(3, 15))
    assert [count_queries(viewer_client, url) for url in urls] == few


def test_a_library_says_which_python_and_network_its_readers_have(kv):
    maintainer_client = logged_in(make_user("librarian", "walkthroughs.change_library"))
    url = reverse("library_settings", args=[kv.library_id])
    fields = {"name": "sqlite3", "default_backend": "rules", "walkthrough_pattern": "tutorial", "network": "none"}
    refused = maintainer_client.post(url, {**fields, "python_version": "three"}).content.decode()
    assert "Give a Python version such as 3.11" in refused
    maintainer_client.post(url, {**fields, "python_version": "3.11"})
    kv.library.refresh_from_db()
    assert (kv.library.python_version, kv.library.network) == ("3.11", "none")


def test_the_library_form_says_pypi_and_every_page_leads_to_the_api_tokens(db):
    lead = logged_in(make_user("lead", "walkthroughs.add_library"))
    page = lead.get(reverse("library_new")).content.decode()
    assert "PyPI name" in page and "Pypi name" not in page
    assert f'<a href="{reverse("tokens")}" >API tokens</a>' in page


def test_the_trend_shows_example_failures_as_a_series_of_their_own(viewer_client, tmp_path):
    from stackbench.formats.results import ValidationSummary
    from stackbench.lib.jsonfiles import write_model
    from tests.builders import validation_doc

    for day, statuses in (("01", ["failure", "failure"]), ("02", ["failure", "success"])):
        path = tmp_path / day / "validation_summary.json"
        path.parent.mkdir()
        document = validation_doc("a.md", statuses)
        document.validation_timestamp = f"2026-11-{day}T10:00:00Z"
        write_model(path, ValidationSummary(timestamp=f"2026-11-{day}T10:01:00Z", documents=[document]))
        import_paths([path], library_name="toolz")
    page = viewer_client.get(reverse("home")).content.decode()
    assert "Audit gaps: none; failing examples: 2, 1" in page
    assert '<polyline class="failures"' in page and '<polyline class="gaps"' not in page


def test_empty_pages_point_to_a_new_library_and_its_docs_repository(db):
    lead = logged_in(make_user("lead", "walkthroughs.add_library"))
    home = lead.get(reverse("home")).content.decode()
    assert f'<a href="{reverse("library_new")}">New library</a>, then connect its docs repository' in home
    library = Library.objects.create(name="fresh")
    page = lead.get(library.get_absolute_url()).content.decode()
    assert page.count("Connect the docs repository in Settings") == 2


def test_relative_images_of_the_docs_show_and_nothing_else_of_the_disk_is_served(
    viewer_client, make_walkthrough, tmp_path
):
    docs = tmp_path / "repo" / "docs"
    (docs / "img").mkdir(parents=True)
    (docs / "img" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (docs / "notes.md").write_text("private")
    (tmp_path / "repo" / "secret.png").write_bytes(b"\x89PNG")
    path = make_walkthrough([("Look", "![the logo](img/logo.png) and ![web](https://example.org/x.png)", "")])
    import_paths([path], library_name="pictures")
    Library.objects.filter(name="pictures").update(docs_repo=str(tmp_path / "repo"), docs_folder="docs")
    Walkthrough.objects.update(original_doc_path="tutorial.md")
    library = Library.objects.get(name="pictures")
    page = viewer_client.get(Walkthrough.objects.get().get_absolute_url()).content.decode()
    image = reverse("library_docs_file", args=[library.pk, "img/logo.png"])
    assert f'<img src="{image}" alt="the logo" />' in page and 'src="https://example.org/x.png"' in page
    served = viewer_client.get(image)
    assert served.status_code == 200 and served["Content-Type"] == "image/png"
    for refused in ("notes.md", "../secret.png", "img/missing.png"):
        assert viewer_client.get(reverse("library_docs_file", args=[library.pk, refused])).status_code == 404


def test_a_long_walkthrough_is_read_fifty_steps_a_page(viewer_client, make_walkthrough):
    steps = [(f"Step {n}", f"Do thing {n}.", "") for n in range(1, 121)]
    import_paths([make_walkthrough(steps, name="wt_long")], library_name="long")
    url = reverse("walkthrough", args=[Walkthrough.objects.get(walkthrough_id="wt_long").pk])
    first = viewer_client.get(url).content.decode()
    assert first.count('class="card step"') == 50 and 'id="step-50"' in first and 'id="step-51"' not in first
    assert "Page 1 of 3 · 120 in all" in first
    last = viewer_client.get(url, {"page": 3}).content.decode()
    assert last.count('class="card step"') == 20 and 'id="step-120"' in last


def test_after_a_run_whose_page_had_a_setup_problem_the_library_and_the_home_card_show_the_same_failures(
    viewer_client, tmp_path
):
    from audits.models import ExampleResult, Run, RunStatus, ValidationDocument
    from stackbench.formats.results import SetupProblem, ValidationSummary
    from stackbench.lib.jsonfiles import write_model
    from tests.builders import validation_doc

    with_problem = validation_doc("a-setup.md", ["success", "failure"])
    with_problem.setup_problems = [SetupProblem(requirement="$(tool get-deps)", message="not installed")]
    stopped = validation_doc("b-stopped.md", ["success"])
    plain = validation_doc("c-plain.md", ["success", "failure"])
    write_model(
        tmp_path / "validation_summary.json",
        ValidationSummary(timestamp="2026-11-01T10:01:00Z", documents=[with_problem, stopped, plain]),
    )
    import_paths([tmp_path / "validation_summary.json"], library_name="toolz")
    # As the worker leaves a run one of whose pages stopped: that page without results, the run failed.
    document = ValidationDocument.objects.get(page="b-stopped.md")
    ExampleResult.objects.filter(document=document).delete()
    document.install_error = "The validation stopped: no sandbox for the examples of b-stopped.md"
    document.save()
    run = Run.objects.get()
    run.status = RunStatus.FAILED
    run.save()
    library = viewer_client.get(reverse("library", args=[run.library_id])).content.decode()
    home = viewer_client.get(reverse("home")).content.decode()
    assert "never validated" not in library
    assert library.count('title="failing examples, error">1 error</span>') == 2
    assert "validation stopped" in library
    card = home[home.index("<strong>Failing examples:</strong>") :]
    assert card[: card.index("</p>")].count('title="failing examples, error">2 error</span>') == 1
