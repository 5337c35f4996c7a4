"""A batch's library installs, made once and copied privately into each page's sandbox, offline against wheels the
tests build."""

import pytest

from stackbench.validation.batch import validate_all
from stackbench.validation.document_sandbox import DocumentSandbox
from tests.stackbench.validation.example_pages import analysis, outcome

pytestmark = pytest.mark.slow


@pytest.fixture
def installs(monkeypatch):
    """Every install a sandbox runs, as the requirements it was given."""
    made: list[list[str]] = []
    install = DocumentSandbox.install

    def counted(self, requirements, apart=None):
        if apart is None:  # a look-up unpacks apart from the reader's virtualenv: no install of theirs
            made.append(list(requirements))
        return install(self, requirements, apart)

    monkeypatch.setattr(DocumentSandbox, "install", counted)
    return made


def test_the_library_is_installed_once_for_a_batch_and_a_page_never_changes_what_the_next_one_starts_from(
    offline, installs, tmp_path
):
    changer = analysis(
        "import pathlib, sbdemo\npathlib.Path(sbdemo.__file__).write_text('raise SystemExit(\"changed\")')"
    ).model_copy(update={"page": "changer.md"})
    reader = analysis("from sbdemo import greet\nprint(greet('a'))").model_copy(update={"page": "reader.md"})
    first, second = validate_all([changer, reader], tmp_path, offline).documents
    assert outcome(first) == [("success", None)] and outcome(second) == [("success", None)]
    assert installs == [["sbdemo==1.0.0"]]


def test_a_library_that_will_not_install_is_installed_by_each_page_itself_and_named_as_its_setup_problem(
    offline, installs, tmp_path
):
    pages = [analysis("import sbdemo", version="9.9.9").model_copy(update={"page": f"{n}.md"}) for n in "ab"]
    for document in validate_all(pages, tmp_path, offline).documents:
        assert outcome(document) == [("failure", "warning")]
        assert [p.requirement for p in document.setup_problems] == ["sbdemo==9.9.9"]
    assert installs == [["sbdemo==9.9.9"]] * 3  # the batch's try, then each page's own


def test_a_page_that_imports_more_installs_only_that_on_top_of_the_batchs_library(offline, installs, tmp_path):
    plain = analysis("import sbdemo\nprint(sbdemo.greet('a'))").model_copy(update={"page": "plain.md"})
    fancy = analysis("import sbfancy\nprint(sbfancy.decorate('a'))", prose_names=["sbfancy"])
    fancy = fancy.model_copy(update={"page": "fancy.md"})
    documents = validate_all([plain, fancy], tmp_path, offline).documents
    assert [outcome(d) for d in documents] == [[("success", None)], [("success", None)]]
    assert installs == [["sbdemo==1.0.0"], ["sbdemo[fancy]==1.0.0"]]  # sbfancy comes with the library's extra
