"""Every string a document, a command or a person supplies, rendered on every page that shows it: none of it can
run script, and our own pages run under the Content-Security-Policy without a single violation."""

import pytest
from django.contrib.auth.models import User

from audits.importing import import_paths
from audits.models import Gap, Problem, Run
from tests.browser.conftest import screenshot
from tests.builders import validation_doc
from walkthroughs.models import DocPage, Feedback, Library, PresentedWalkthrough, Walkthrough

pytestmark = pytest.mark.slow

PAYLOAD = (
    '<script>window.pwned="script"</script><img src=x onerror="window.pwned=\'img\'">'
    "<svg onload=\"window.pwned='svg'\"></svg>"
)
LINK = "[read more](javascript:window.pwned='link')"
MARKDOWN = f'Text {PAYLOAD}\n\n{LINK}\n\n```mermaid\nflowchart LR\n  A["{PAYLOAD}"] --> B\n  click A "javascript:window.pwned=\'mermaid\'"\n```\n'

INJECTED = """() => {
  const handlers = [...document.querySelectorAll('*')].filter(el => [...el.attributes].some(a => /^on/i.test(a.name)));
  return {
    pwned: window.pwned || null,
    inlineScripts: [...document.scripts].filter(s => !s.src).length,
    handlers: handlers.map(el => el.outerHTML.slice(0, 120)),
    scriptLinks: [...document.querySelectorAll('a[href], [xlink\\\\:href]')].filter(a =>
        /^\\s*javascript:/i.test(a.getAttribute('href') || a.getAttribute('xlink:href') || '')).length,
  };
}"""


@pytest.fixture
def hostile(page, tmp_path, make_walkthrough, import_audit, symposium_repo, settings):
    library_name = f"lib {PAYLOAD}"
    path = make_walkthrough(
        [(f"Step {PAYLOAD}", MARKDOWN, f"1. Run `echo '{PAYLOAD}'`")],
        name="wt_hostile",
        title=f"Title {PAYLOAD}",
        description=MARKDOWN,
    )
    import_paths([path], library_name=library_name)
    run = import_audit(
        walkthrough_id="wt_hostile",
        library=library_name,
        gaps=[(1, f"Step {PAYLOAD}", "clarity", "critical", f"Gap {PAYLOAD} {LINK}")],
    )
    Gap.objects.update(context=f"$ echo\n</pre>{PAYLOAD}", suggested_fix=f"Fix {LINK} {PAYLOAD}")
    author = User.objects.get(username="maintainer")
    problem = Problem.objects.get()
    problem.add_comment(author, f"Comment {PAYLOAD} {LINK}")

    document = validation_doc(f"docs/{PAYLOAD[:20]}.md", ["failure"]).model_dump(mode="json")
    document["library"] = library_name
    document["results"][0].update(
        code=PAYLOAD, error_message=f"Error {PAYLOAD}", execution_output=PAYLOAD, suggestions=f"{LINK} {PAYLOAD}"
    )
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "hostile_validation.json").write_text(__import__("json").dumps(document))
    import_paths([tmp_path / "v"])

    settings.STACKBENCH_REPO_ROOTS = [str(symposium_repo.parent)]
    presented = PresentedWalkthrough.present(
        f"# Review {PAYLOAD}\n\n{MARKDOWN}\n\n```comment\nlocation: findDefinition(`login`)\n\nComment {PAYLOAD} {LINK}\n```\n\n"
        f"```action\nbutton: Go {PAYLOAD}\n\nTell {PAYLOAD}\n```\n",
        str(symposium_repo),
        user=author,
    )
    Feedback.objects.create(
        walkthrough=presented,
        kind=Feedback.Kind.REPLY,
        element_key="introduction.2",
        text=f"Reply {PAYLOAD}",
        created_by=author,
    )
    library = Library.objects.get(name=library_name)
    return {
        "home": "/",
        "library": library.get_absolute_url(),
        "walkthrough": Walkthrough.objects.get().get_absolute_url(),
        "run": run.get_absolute_url(),
        "runs": "/runs/",
        "gaps": "/gaps/",
        "problems": "/problems/",
        "problem": problem.get_absolute_url(),
        "doc page": DocPage.objects.get().get_absolute_url(),
        "validation run": Run.objects.filter(kind="validation").get().get_absolute_url(),
        "presented": presented.get_absolute_url(),
        "presented list": "/presented/",
    }


def test_no_supplied_string_runs_script_on_any_page(page, hostile):
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    for name, url in hostile.items():
        page.goto(url)
        page.wait_for_load_state("networkidle")
        found = page.evaluate(INJECTED)
        assert found == {"pwned": None, "inlineScripts": 0, "handlers": [], "scriptLinks": 0}, name
        assert "window.pwned" in page.content(), f"{name} does not show the hostile text at all"
        # Clicking every link would leave the page; javascript: links were checked above, so click the diagrams.
        for node in page.locator("pre.mermaid svg .node").all():
            node.click(force=True)
        assert page.evaluate("window.pwned || null") is None, name
        if name in ("walkthrough", "presented"):
            screenshot(page, f"hostile-{name}")
    assert not dialogs
    assert not page.console_errors, "a page broke or violated the Content-Security-Policy"
