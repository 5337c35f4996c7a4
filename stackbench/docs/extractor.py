"""Rule-based extraction of code examples from a docs folder (markdown, MDX, reStructuredText), in the exact
extraction-analysis format of formats.md, plus extra fields that say how a reader would use each block.

A page is read as its reader sees it: include directives expanded (includes.py), MkDocs admonitions and tabs
opened, MyST directives that hold markdown read inside. Every code block is then one of:

- a doctest session (`>>>` prompts, in any fence: {doctest}, pycon, python or none), run as a session;
- a script: a Python-tagged fence, or an untagged one that holds a program;
- the output of the script before it (an untagged or text block right after it, or after a sentence that
  announces output), kept as that script's expected output;
- shell commands, whose `pip install` lines and `export` lines the validator applies for the reader;
- a file the reader creates (a fence titled with a file name);
- anything else, skipped with the reason.

Hidden setup the docs' own doctest run uses (sphinx.ext.doctest's testsetup blocks and conf.py's
doctest_global_setup) is kept as page setup, not as examples. Every example that is not run says why in its own
words: the placeholder it holds, the `...` the reader fills in, the language it is in."""

import ast
import fnmatch
import re
import shlex
import textwrap
import urllib.parse
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]  # Pygments ships no type hints
from pygments.util import ClassNotFound  # type: ignore[import-untyped]  # Pygments ships no type hints

from stackbench.docs import python_code
from stackbench.docs.distributions import (
    distribution_for,
    laid_out_modules,
    module_names_of,
    names_package,
    normalized,
    prose_names,
    readers_own,
    required_installed,
)
from stackbench.docs.includes import Expanded, expand, unread_include
from stackbench.docs.page_blocks import (
    Block,
    indent_of,
    markdown_blocks,
    markdown_lists,
    markdown_pieces,
    markdown_titles,
    rst_blocks,
    slugify,
)
from stackbench.docs.shell_words import python_files_run, split_shell_lines
from stackbench.docs.tutorial_text import (
    BUILDS_ON_EARLIER,
    COMPARISON_HEADING,
    FILE_INTRO,
    NAME_IN_PROSE,
    OLD_CODE_INTRO,
    OLD_CODE_LABEL,
    OLDER_RELEASES_ONLY,
    PATH_LIKE,
    READERS_FUNCTION,
    READERS_NAME,
    REPLACED_BY_NEXT,
    TEMPTATION_INTRO,
    UPGRADE_PAGE,
    UPGRADE_TARGET,
    named_python,
    release_named,
)
from stackbench.formats.walkthrough import (
    RUNNABLE_STYLES,
    CodeExample,
    ExtractionAnalysis,
    FileCommand,
    PageFile,
    PageRequirement,
    PageVariable,
    SetupCode,
)
from stackbench.lib.clock import utcnow
from stackbench.lib.markdown import FenceInfo

DOC_SUFFIXES = (".md", ".mdx", ".markdown", ".rst")
MAX_DOC_BYTES = 2_000_000
PYTHON_TAGS = {"python", "py", "python3", "py3", "pycon", "ipython", "ipython3", "doctest", "pytb"}
# Fences whose tag says nothing about a language: what they hold decides.
NEUTRAL_TAGS = {"", "text", "txt", "plain", "plaintext", "none", "default", "code", "output", "nohighlight", "raw"}
# Diagram languages highlighters do not know: a picture the docs draw, never a program or what one prints.
DIAGRAM_TAGS = {"mermaid", "plantuml", "puml", "d2", "svgbob", "ditaa", "wavedrom"}
SHELL_TAGS = {"bash", "sh", "shell", "console", "zsh", "shell-session", "shellsession", "sh-session", "fish", "ps1"}
# MyST directives: which hold code, which hold markdown to read inside, which hide setup.
DOCTEST_DIRECTIVES = {"doctest"}
SETUP_DIRECTIVES = {"testsetup"}
HIDDEN_DIRECTIVES = {"testcleanup"}
SCRIPT_DIRECTIVES = {"testcode"}
OUTPUT_DIRECTIVES = {"testoutput"}
CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "code-cell", "ipython", "code-tab"}
# Any other directive whose content is a program (a theme's `.. domain:example::`, `{jupyter-execute}`) is an
# untagged block; these never hold one, whatever their content parses as (`x = y + 1` in a formula).
NOT_CODE_DIRECTIVES = {
    "math",
    "raw",
    "mermaid",
    "graphviz",
    "csv-table",
    "list-table",
    "table",
    "toctree",
    "autosummary",
}
# A directive named for a run (`.. domain:run::`, `{program-output}`) shows the docs build running a command and
# its output: the reader sees a terminal, not code to type.
RUN_DIRECTIVE_WORDS = {"run", "runblock", "output", "invoke", "console", "terminal", "shell"}
# A sentence between a script and a block that announces the block as what the script prints.
OUTPUT_CUE = re.compile(
    r"\b(output|outputs|print|prints|printed|result|results|returns?|shows?|displays?|gives?|produces?|emits?|"
    r"renders?|see|looks? like|get|gets)\b",
    re.IGNORECASE,
)
INSTALL = re.compile(
    r"^\s*(?:\$\s+|>\s+|%\s+)?(?:(?:python3?|py)\s+-m\s+)?(?:uv\s+pip|pip3?|uv|poetry|pipenv|pdm|rye)\s+"
    r"(?:install|add)\s+(.+)$"
)
# Prose that names an extra of the page's library to install: "Install the `redis` extra", "with the `s3` extra".
EXTRA_NAMED = re.compile(
    r"\b(?:install|installing|installed|with|add|adding|using|enable|requires?|needs?)\s+the\s+`([A-Za-z0-9][\w.-]*)`"
    r"\s+extras?\b",
    re.IGNORECASE,
)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
# A link that hands the reader a file to save ("Download [`invalid.csv`](https://…/invalid.csv)"): its text is a
# file name and its address ends with that name.
LINKED_FILE = re.compile(r"\[`?([\w-][\w.-]*\.[A-Za-z0-9]+)`?\]\((https?://[^)\s]+)\)")
# What a link to a web page (not to a file's own bytes) ends with or passes through.
WEB_PAGE = re.compile(r"\.(?:html?|php|aspx?|md|rst)$|/(?:blob|tree|wiki)/", re.IGNORECASE)
EXPORT = re.compile(r"^\s*(?:\$\s+)?export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
FILE_TITLE = re.compile(r"^[\w./~-]*\.?[\w-]+(?:\.[\w-]+)*$")
MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!])")


@dataclass
class ExtractionReport:
    analyses: list[tuple[str, ExtractionAnalysis]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# -- reading one block ------------------------------------------------------------------------------------------
def _is_python_tag(language: str) -> bool:
    return language in PYTHON_TAGS


def _is_neutral_tag(language: str) -> bool:
    """No tag, a plain-text tag, or a tag no highlighter knows: the content decides."""
    if language in NEUTRAL_TAGS:
        return True
    if language in DIAGRAM_TAGS:
        return False
    try:
        get_lexer_by_name(language)
    except ClassNotFound:
        return True
    return False


def _python_named_near(source: str, block: Block) -> str | None:
    """For code in the syntax of a newer Python: the Python the page names near it (in its section's text
    before it, its heading or its comments), which the validator compares with the one the code needs."""
    if python_code.newer_syntax(source) is None:
        return None
    return named_python("\n".join([block.section_before, *block.hierarchy[-1:], source]))


def _shows_a_run(directive: str) -> bool:
    return bool(RUN_DIRECTIVE_WORDS & set(re.split(r"[:_-]", directive)))


def _holds_program(directive: str, code: str) -> bool:
    """A directive of a theme or extension whose content the page shows as a program or a session: read like
    an untagged block."""
    if directive in NOT_CODE_DIRECTIVES:
        return False
    tree = python_code.parse(code)
    return python_code.is_session(code) or (tree is not None and python_code.looks_like_program(tree))


def _build_helpers(code: str, earlier: list[str]) -> list[str]:
    """The names a program a run directive holds calls that neither it nor the page's code before it (earlier:
    the sources of its runnable examples and setup) defines: helpers the docs' build gives the run, which the
    reader never sees. A run that calls none runs for the reader as it ran for the build."""
    tree = python_code.parse(python_code.session_source(code) if python_code.is_session(code) else code)
    assert tree is not None, "only a directive that holds a program is asked"
    defined = set().union(*(python_code.defined_names(t) for t in map(python_code.parse, earlier) if t is not None))
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    return sorted((python_code.undefined_names(tree) & called) - defined)


def _run_reason(helpers: list[str]) -> str:
    if helpers:
        named = ", ".join(f"`{name}`" for name in helpers)
        return f", calling {named}, which its build provides and the page never defines: the reader sees its output"
    return ": the reader sees its output, not code"


# A sentence saying what follows is printed ("`help(add)` now prints the following:"), not merely seen.
PRINTS = re.compile(r"\b(?:prints?|printed|outputs?|displays?)\b", re.IGNORECASE)
# A sentence about code (it introduces a block of code, even one that says what the code prints).
CODE_NOUN = re.compile(r"\b(?:code|example|snippet|script|program|function|class)\b", re.IGNORECASE)


def _announces_output(prose: str) -> bool:
    """The text between a script and a block presents the block as the script's output."""
    text = prose.strip()
    if not text:
        return True
    last = re.split(r"(?<=[.!?])\s+", text)[-1]
    return len(text) <= 300 and bool(OUTPUT_CUE.search(last)) and (text.endswith(":") or len(text) <= 120)


FILE_COMMENT = re.compile(r"^\s*(?:#|//|;)\s*([\w./~-]+\.(?:toml|ya?ml|json|ini|cfg|conf|env|txt|csv))\s*$")


def _title_file(info: FenceInfo, code: str) -> str | None:
    """The file a block shows: named in its title or its tab (```toml title="config.toml", ```python
    tab="hooks.py", markdown escapes rendered: `\\_\\_init\\_\\_.py` reads `__init__.py`), or, for a data file, in
    a comment on its first line (# config.toml)."""
    for attribute in ("title", "tab"):
        title = MARKDOWN_ESCAPE.sub(r"\1", info.attribute(attribute) or "")
        if title and FILE_TITLE.match(title) and ("." in title or "/" in title):
            return title
    if info.language not in PYTHON_TAGS and info.language not in SHELL_TAGS:
        first = next((line for line in code.split("\n") if line.strip()), "")
        match = FILE_COMMENT.match(first)
        if match:
            return match.group(1)
    return None


# "# helpers.py", "# in helpers.py", "# file: helpers.py", "# contents of helpers.py" atop a Python block.
MODULE_COMMENT = re.compile(
    r"^\s*#\s*(?:(?:in|file|filename|contents? of|save (?:this )?as)\s*:?\s+)?`?([\w./-]*\w\.py)`?\s*:?\s*$",
    re.IGNORECASE,
)


# "Let's create a `cases.py` file.", "we write our tests in a `test_shapes.py` file": a sentence of the paragraph
# before a block that names the one module it goes in, as a file the reader makes or writes in.
PARAGRAPH_MODULE = re.compile(
    r"\b(?:create|write|save|put|add|in|into)\b[^`.\n]{0,40}?\b(?:a|an|the|your)\s+(?:new\s+)?`([\w./-]*\w\.py)`\s+file\b",
    re.IGNORECASE,
)


# A line that is nothing but a path and a colon (`` `package/a.py`: ``, **`app.py`:**): the caption of the block
# under it, the file it is.
PATH_CAPTION = re.compile(r"^[*_]*`([^`\s]+)`[*_]*\s*:[*_]*$")
# A paragraph that is nothing but a file's name and a colon set off as a caption (*config.txt:*, **`app.ini`**:).
CAPTION_PARAGRAPH = re.compile(r"^[*_]+`?([\w./-]+\.[A-Za-z0-9]{1,8})`?\s*:?[*_]+\s*:?$")


def _captioned_data_file(code: str, prose: str) -> str | None:
    """The file that is no Python module a caption paragraph just before the block names (*config.txt:*, then
    perhaps a sentence leading into the block), for a block that does not parse as Python: that file's contents,
    whatever the fence's tag says."""
    if python_code.parse(code) is not None:
        return None
    paragraphs = [paragraph.strip() for paragraph in prose.split("\n") if paragraph.strip()]
    for paragraph in paragraphs[-2:]:
        captioned = CAPTION_PARAGRAPH.match(paragraph)
        if captioned and not captioned.group(1).endswith(".py") and PATH_LIKE.match(captioned.group(1)):
            return captioned.group(1)
    return None


def _module_file(code: str, prose: str) -> str | None:
    """The module a Python block is, when the page names it: a comment on its first line, the sentence just
    before it ("Create `helpers.py`:", "In `app.py`:", "save this as `tasks.py`", a caption "`app.py`:"), or the
    paragraph before it naming the one file the reader makes ("Let's create a `helpers.py` file. It will hold …").
    A reader saves it under that name, so later blocks that import it work."""
    if len(files_shown(code)) > 1:
        return None  # several modules, none of them the whole block
    first = next((line for line in code.split("\n") if line.strip()), "")
    match = MODULE_COMMENT.match(first)
    if match:
        return match.group(1)
    sentence = _last_sentence(prose)
    captioned = PATH_CAPTION.match(sentence) or CAPTION_PARAGRAPH.match(sentence)
    if captioned and captioned.group(1).endswith(".py") and PATH_LIKE.match(captioned.group(1)):
        return captioned.group(1)
    intro = FILE_INTRO.search(sentence)
    # The name closes the sentence that leads into the block ("… `app.py`:", "… `app.py` file with:"); a name in
    # the middle of an explanation is talked about, not written.
    leads_in = intro is not None and sentence.endswith(":") and len(sentence[intro.end(2) + 1 :]) <= 20
    if intro and leads_in and intro.group(2).endswith(".py") and PATH_LIKE.match(intro.group(2)):
        return intro.group(2)
    paragraphs = [paragraph for paragraph in prose.split("\n\n") if paragraph.strip()]
    named = set(PARAGRAPH_MODULE.findall(paragraphs[-1])) if paragraphs else set()
    return named.pop() if len(named) == 1 else None


# Where a page puts a block in the reader's package: `{your_package}.__init__`, `mypkg/__init__.py`, or an
# `__init__.py` said to be the reader's package's ("your package's `__init__.py`").
NAMED_PACKAGE_INIT = re.compile(r"[{<]?([A-Za-z_]\w*)[}>]?[./]__init__(?:\.py)?\b")
PACKAGE_INIT = re.compile(r"\b__init__(?:\.py)?\b")
READERS_PACKAGE = re.compile(r"\byour\s+(?:own\s+)?(?:package|project|library|app)\b", re.IGNORECASE)


def _package_init(code: str, prose: str) -> str | None:
    """The reader's own package whose `__init__.py` the block is, as a comment of its own or the sentence just
    before it says: code that acts on the package it is in (registers it, configures it) runs there, never as a
    script outside any package."""
    comments = [line for line in code.split("\n") if line.lstrip().startswith("#")]
    for text in [*comments, _last_sentence(prose)]:
        named = NAMED_PACKAGE_INIT.search(text)
        if named and readers_own(named.group(1)):
            return named.group(1)
        if not named and PACKAGE_INIT.search(text) and READERS_PACKAGE.search(text):
            return "your_package"
    return None


def files_shown(code: str) -> list[str]:
    """The modules a block names in comment lines of their own at its left edge (`# app.py`, `# in lib/db.py`),
    in order: each starts the part of the block that is that file."""
    return [match.group(1) for line in code.split("\n") if line[:1] == "#" and (match := MODULE_COMMENT.match(line))]


def _option_file(options: dict[str, str]) -> str | None:
    """The file a MyST code-block names in its :caption: or :name: option (`:caption: hello.py`)."""
    for key in ("caption", "name", "filename"):
        value = options.get(key, "").strip()
        if value and FILE_TITLE.match(value) and "." in value:
            return value
    return None


# The project's own checkout given to the installer (`.`, `.[tests]`, `-e ".[dev]"`): a contributor's setup.
SOURCE_CHECKOUT = re.compile(r"^\.{1,2}(?:\[[^\]]*\])?$")


def shell_requirements(code: str) -> list[str]:
    """The packages `pip install` (and uv/poetry/pdm add) lines of a shell block install. A line that installs
    the project from its own checkout (`pip install .[tests] pytest-cov`) sets up its contributors, not its
    readers: what else it installs is the project's tests' need."""
    found = []
    for line in _shell_lines(code):
        match = INSTALL.match(line)
        if not match:
            continue
        try:
            words = _substitutions_whole(shlex.split(match.group(1), comments=True))
        except ValueError:
            continue
        if any(SOURCE_CHECKOUT.match(word) for word in words):
            continue
        skip_next = False
        for word in words:
            if skip_next:
                skip_next = False
                continue
            if word in (
                "-r",
                "-c",
                "-e",
                "--requirement",
                "--constraint",
                "--editable",
                "-i",
                "--index-url",
                "--extra-index-url",
                "-f",
                "--find-links",
                "--python",
                "-p",
                "--group",
            ):
                skip_next = True
                continue
            if word.startswith("-") or word in (".", "..") or "/" in word or word.startswith(("&", "|", ";")):
                if word.startswith(("&", "|", ";")):
                    break
                continue
            found.append(word)
    return found


def linked_files(prose: str) -> list[tuple[str, str]]:
    """The files a paragraph links for its reader to save, as (name, address): a link whose text is the file's
    name and whose address ends with it; never a web page about the file."""
    found = []
    for name, url in LINKED_FILE.findall(prose):
        path = urllib.parse.urlsplit(url).path
        if PurePosixPath(path).name == name and not WEB_PAGE.search(path):
            found.append((name, url))
    return list(dict.fromkeys(found))


def install_choices(text: str, page: str, library: str) -> list[str]:
    """The first item of each list of the page's installation section (or page) whose items each install the
    library with another extra (`- PyQt5: pip install lib[pyqt5]`, `- PySide6: pip install lib[pyside6]`):
    alternatives, of which the reader installs one."""
    chosen: list[str] = []
    for shown in markdown_lists(text):
        if not any(INSTALLATION.search(place) for place in [PurePosixPath(page).stem, *shown.hierarchy]):
            continue
        installs = [_library_installs(item, library) for item in shown.items]
        if (
            all(len(specs) == 1 for specs in installs)
            and len({frozenset(Requirement(s[0]).extras) for s in installs}) > 1
        ):
            chosen.append(installs[0][0])
    return chosen


def installation_lines(text: str, page: str) -> list[str]:
    """What the install lines of the page's installation section (or page) install, in page order: its shell
    blocks' and the `pip install "lib[all]"` its sentences and list items give in inline code."""
    found: list[str] = []
    for piece in markdown_pieces(text):
        if not any(INSTALLATION.search(place) for place in [PurePosixPath(page).stem, *piece.hierarchy]):
            continue
        if piece.language is None:
            found += _well_formed(
                [spec for span in CODE_SPAN.findall(piece.content) for spec in shell_requirements(span)]
            )
        elif piece.language in SHELL_TAGS:
            found += shell_requirements(piece.content)
    return found


def _library_installs(text: str, library: str) -> list[str]:
    """The installs of the library with extras that the text's inline code spans give (`pip install lib[qt]`)."""
    return [
        spec
        for span in CODE_SPAN.findall(text)
        for spec in _well_formed(shell_requirements(span))
        if normalized(Requirement(spec).name) == normalized(library) and Requirement(spec).extras
    ]


def prose_requirements(prose: str, library: str) -> list[str]:
    """The packages a paragraph tells the reader to install: an inline `pip install "lib[extra]"`, or an extra
    of the library it names ("install the `redis` extra"). Only well-formed requirements: prose is loose."""
    found = [spec for span in CODE_SPAN.findall(prose) for spec in shell_requirements(span)]
    found += [f"{library}[{extra}]" for extra in EXTRA_NAMED.findall(prose)]
    return _well_formed(found)


def prose_imports(prose: str) -> list[str]:
    """The import statements a paragraph gives in its words ("assuming the library is imported using `import
    portion as P`", "to use the API, `import isort` and then ..."): one statement per inline code span."""
    found = []
    for span in CODE_SPAN.findall(prose):
        tree = python_code.parse(span.strip())
        statement = tree.body[0] if tree is not None and len(tree.body) == 1 else None
        if isinstance(statement, ast.Import) or (
            isinstance(statement, ast.ImportFrom)
            and statement.module != "__future__"
            and all(alias.name != "*" for alias in statement.names)
        ):
            found.append(span.strip())
    return found


def _well_formed(specs: list[str]) -> list[str]:
    wanted = []
    for spec in specs:
        try:
            Requirement(spec)
        except InvalidRequirement:
            continue
        wanted.append(spec)
    return wanted


# Prose that opens with a picture (Markdown's `![…](…)`, or an HTML `<img>`): what the block before it shows.
PICTURE = re.compile(r"\s*(?:!\[|<img\b|<p[^>]*>\s*<img\b)", re.IGNORECASE)
# A pip requirements file (requirements.txt, requirements-dev.txt) an example project keeps beside its code.
REQUIREMENTS_FILE = re.compile(r"^requirements[\w.-]*\.txt$", re.IGNORECASE)


def file_requirements(content: str) -> list[str]:
    """The packages a pip requirements file lists: one a line, without comments and pip's options (`-r`, `-e`)."""
    lines = (line.split(" #")[0].strip() for line in content.split("\n"))
    return _well_formed([line for line in lines if line and not line.startswith(("#", "-"))])


def _substitutions_whole(words: list[str]) -> list[str]:
    """A command substitution (`$(tool get-deps)`, `` `tool deps` ``) is one thing the reader's shell works out,
    however many words it spans."""
    joined: list[str] = []
    open_words: list[str] = []
    for word in words:
        if open_words or "$(" in word or word.count("`") % 2:
            open_words.append(word)
            text = " ".join(open_words)
            if text.count("(") <= text.count(")") and not text.count("`") % 2:
                joined.append(text)
                open_words = []
            continue
        joined.append(word)
    return joined + ([" ".join(open_words)] if open_words else [])


def commented_exports(code: str) -> list[tuple[str, str]]:
    """The variables a Python block's comment lines export (`# export NAME=value`). One that holds an absolute
    path names a place on the reader's machine (`/run/secrets/…`), which the page does not give: theirs to set."""
    comments = [line.lstrip()[1:] for line in code.split("\n") if line.lstrip().startswith("#")]
    return [(name, value) for name, value in shell_variables("\n".join(comments)) if not value.startswith("/")]


def shell_variables(code: str) -> list[tuple[str, str]]:
    variables = []
    for line in _shell_lines(code):
        match = EXPORT.match(line)
        if not match:
            continue
        try:
            words = shlex.split(match.group(2), comments=True)
        except ValueError:
            continue
        variables.append((match.group(1), words[0] if words else ""))
    return variables


def file_commands(code: str, language: str, line: int) -> list[FileCommand]:
    """The shell block's lines that give Python files to a program, as the page shows them."""
    commands, _ = split_shell_lines(code, console=language == "console")
    return [
        FileCommand(command=command, program=program, files=files, line=line)
        for command in commands
        for program, files in python_files_run(command)
    ]


PYTEST_COMMAND = ("pytest", "py.test")


def pytest_long_options(code: str, language: str) -> list[str]:
    """The long options the shell block's pytest lines give (`pytest --snapshot-update`), each once: the way the
    page has its reader run their tests. An option whose value follows it as a word of its own is left out."""
    commands, _ = split_shell_lines(code, console=language == "console")
    options: list[str] = []
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            continue
        at = next((i for i, word in enumerate(words) if word in PYTEST_COMMAND), None)
        if at is None or {"install", "add"} & set(words[:at]):  # installing pytest is no run of it
            continue
        arguments = words[at + 1 :]
        for position, word in enumerate(arguments):
            following = arguments[position + 1] if position + 1 < len(arguments) else "-"
            takes_value = "=" not in word and not (
                following.startswith("-") or following.endswith("/") or PATH_LIKE.match(following)
            )
            if word.startswith("--") and len(word) > 2 and not takes_value and word not in options:
                options.append(word)
    return options


def _right_under_an_example(block: Block, line: int, examples: list[CodeExample]) -> bool:
    """The block follows a runnable example with nothing between them but the fences and a blank line (a
    directive's own header, a heading or a sentence between them sets the block apart)."""
    before = examples[-1] if examples else None
    return (
        before is not None
        and before.style in RUNNABLE_STYLES
        and before.execution_context != "not_executable"
        and not block.prose_before.strip()
        and line - (before.line + len(before.code.splitlines())) <= 3
    )


def _shell_lines(code: str) -> list[str]:
    """Logical lines: continuations (a trailing backslash) joined."""
    return code.replace("\\\n", " ").split("\n")


def placeholder_reason(
    code: str, tree: ast.Module | None, indented: bool = False, module_file: bool = False
) -> str | None:
    """Why a program cannot run as written: a value the reader must put in, or code they must fill in, or code
    the block leaves out (indented: the page shows every line of it indented), or a file the docs' build includes
    there and the docs do not ship (the reader sees that file, never the directive), or several files shown in
    one block, each under its name. A module the page names (module_file: a hook file a program loads) is whole
    as shown: a class of it whose body is `...` is the empty subclass the program gets."""
    include = unread_include(code)
    if include:
        return f"it includes `{include}`, a file the docs' build puts there and the docs do not ship"
    value = python_code.fill_in(python_code.without_documented_output(code, tree))
    if value:
        return f"it holds the placeholder `{value}`, which the reader replaces with their own value"
    line = python_code.ellipsis_gap(tree, code) if tree is not None else python_code.ellipsis_syntax_gap(code)
    if line is not None:
        return f"its line {line} has `...` where the reader fills in their own code"
    line = python_code.skeleton_body(code) if tree is None else None
    if line is not None:
        return f"the body under its line {line} is only a comment, where the reader writes their own code"
    files = files_shown(code)
    if len(files) > 1:
        return f"it shows {len(files)} files in one block (`{'`, `'.join(files)}`), which the reader saves apart"
    prose = python_code.prose_gap(code) if tree is None else None
    if prose is not None:
        return f"its line {prose[0]} has words (`{prose[1]}`) where the reader writes their own code"
    slot = python_code.template_slot(code) if tree is None else None
    if slot is not None:
        return f"it is a template: `{slot[1]}` (its line {slot[0]}) stands for what the reader writes there"
    line = python_code.body_excerpt(tree) if tree is not None else None
    if line is not None:
        return f"its line {line} returns or yields outside a function: lines from a function's body, without it"
    if tree is not None and python_code.left_out_code(tree):
        return "it opens on a lone `...`: the code of the file before it is left out"
    if tree is not None and python_code.class_body_excerpt(tree, indented):
        return "it only declares fields: the body of a class, shown without the class"
    if tree is not None and not module_file and python_code.is_sketch(tree):
        return "it only sketches classes whose bodies are `...` (their fields left out)"
    entries = python_code.only_entries(tree) if tree is not None else None
    if entries:
        return f"it only builds `{entries}` objects and keeps none: entries shown for their shape"
    elided = python_code.elided_fields(tree) if tree is not None else None
    if elided:
        return f"its class `{elided}` has `...` for a body (its fields left out), so it only shows the shape of its use"
    return None


def about_upgrading(block: Block, page: str) -> bool:
    """The block is on a page about upgrading (its file name or a heading above it says so)."""
    return bool(UPGRADE_PAGE.search(page) or any(UPGRADE_PAGE.search(title) for title in block.hierarchy))


def shown_as_old_release(block: Block, library: str, version: str | None, page: str) -> str | None:
    """What a block on a page about upgrading shows instead of the validated release's code ("the 1.x API"),
    when its tab or title, the paragraph that only labels it (`**v1.x:**`), its heading or the sentence before it
    present it as the old release's, or the words after it present the next block as its replacement ("turns
    into"); None for the new code, and on pages about anything else."""
    if not about_upgrading(block, page):
        return None
    label_paragraph = _last_sentence(block.prose_before).strip().strip("*_").strip()
    named = [
        block.info.label,
        block.info.attribute("title") or "",
        label_paragraph,
        block.hierarchy[-1] if block.hierarchy else "",
    ]
    own_name = re.compile(rf"^\s*{re.escape(library)}\s+", re.IGNORECASE)
    matches = [OLD_CODE_LABEL.match(own_name.sub("", label)) for label in named if label]
    matches.append(OLD_CODE_INTRO.match(_last_sentence(block.prose_before)))
    if REPLACED_BY_NEXT.match(block.prose_after.strip().split("\n\n")[0]):
        return "the code from before the change"
    # The release the page moves its reader to: code labelled with it is the new code, on any later release too.
    targets = [release_named(m) for m in map(UPGRADE_TARGET.search, block.hierarchy) if m is not None]
    for match in matches:
        if match is None:
            continue
        release = release_named(match)
        if release is None:
            return "the code from before the change"
        # The nearest label that names a release decides: the validated one's (or a newer one's) code runs.
        older = _older(release, version) and not any(target and not _older(release, target) for target in targets)
        return f"the {release} API" if older else None
    return None


def _tagged_to_raise(block: Block, tree: ast.Module) -> str | None:
    """What a notebook cell tagged to raise (MyST's `:tags: [raises-exception]`) is expected to raise: an exception
    ("Exception"), as the page shows it stop with an error. None when the cell catches the error itself, or the
    text before it says the error only comes with older releases of something (`only ... versions < 2.0`)."""
    tags = {tag.strip(" '\"") for tag in block.options.get("tags", "").strip("[]").split(",")}
    if RAISES_TAG not in tags or python_code.handles_exceptions(tree):
        return None
    return None if OLDER_RELEASES_ONLY.search(block.prose_before) else "Exception"


def _last_sentence(prose: str) -> str:
    """The sentence right before a block: the last of its last paragraph."""
    return re.split(r"(?<=[.!?])\s+", prose.strip().split("\n")[-1])[-1]


# The tag of a notebook cell whose error the page shows (MyST-NB, Jupyter Book): the kernel goes on after it.
RAISES_TAG = "raises-exception"
ARGUED_AGAINST = "Not run: the page shows it as what the reader might be tempted to write, to argue against it."


def shown_for_comparison(block: Block, code: str, library: str) -> str | None:
    """Why a block under a heading that weighs the library against others, using nothing of the library, is not
    run: it shows another library's (or the standard library's) way."""
    heading = next((title for title in reversed(block.hierarchy) if COMPARISON_HEADING.search(title)), None)
    names = {library.lower(), library.lower().replace("-", "_")}
    if heading is None or any(re.search(rf"\b{re.escape(name)}\b", code, re.IGNORECASE) for name in names):
        return None
    return f'Not run: under "{heading}" it shows how it is done without {library}, for comparison.'


# A section or sentence for readers still on Python 2 ("If you really must use Python2", "in Python 2 via this
# backport"): a reader on Python 3 passes it by, its installs too. "Python 2 and 3" speaks to every reader.
PYTHON2 = re.compile(
    r"\bPython ?2(?:\.\d+)?(?:\.x)?(?![.\w])(?!\s*(?:and|or|/|,|&|\+)\s*(?:Python ?)?3)", re.IGNORECASE
)
FOR_PYTHON2_ONLY = "Not run: its section is for readers still on Python 2; a reader on Python 3 passes it by."


def _for_python2(block: Block) -> bool:
    """The block's section (its heading) or the sentence before it speaks to readers of Python 2; an aside in
    brackets ("`collections.abc.Sized` (`collections.Sized` on Python 2):") only notes the older spelling."""
    heading = block.hierarchy[-1] if block.hierarchy else ""
    sentence = re.sub(r"\([^()]*\)", "", _last_sentence(block.prose_before))
    return bool(PYTHON2.search(heading) or PYTHON2.search(sentence))


def _comparison_only(old: str) -> str:
    return f"Not run: it shows {old} for comparison, on a page about upgrading."


def _older(release: str, version: str | None) -> bool:
    """A release docs name ("1.x", "1.4") is older than version (the validated one, or another a page names),
    compared on the parts it names."""
    try:
        validated = Version((version or "").removesuffix(".x")).release
    except InvalidVersion:
        return False
    named = tuple(int(part) for part in release.removesuffix(".x").split("."))
    return validated[: len(named)] > named


# -- the page ---------------------------------------------------------------------------------------------------
@dataclass
class PageReading:
    """What the page holds, block by block, as the validator will need it."""

    examples: list[CodeExample] = field(default_factory=list)
    setup: list[SetupCode] = field(default_factory=list)
    requirements: list[PageRequirement] = field(default_factory=list)
    environment: list[PageVariable] = field(default_factory=list)
    files: list[PageFile] = field(default_factory=list)
    file_commands: list[FileCommand] = field(default_factory=list)
    test_options: list[str] = field(default_factory=list)  # long options its pytest lines give
    prose_names: set[str] = field(default_factory=set)  # the words of its prose that could name a package
    prerequisites: list[str] = field(default_factory=list)  # packages its prose says a feature needs installed
    # imports its paragraphs give in their words, with the line before the block each paragraph introduces
    prose_imports: list[tuple[int, str]] = field(default_factory=list)


def typed_prose_imports(reading: PageReading, page: str) -> list[SetupCode]:
    """The prose's imports a reader types, as the page's setup from their place on: those binding a name a later
    block uses without defining it (an import named in passing, a changelog's "replace `from a import b`", binds
    nothing the examples need)."""
    typed = []
    for line, statement in reading.prose_imports:
        tree = python_code.parse(statement)
        bound = python_code.defined_names(tree) if tree is not None else set()
        if any(e.line > line and bound & _free_names(e) for e in reading.examples):
            typed.append(SetupCode(code=statement, line=line, source=page))
    return typed


# Words that send the reader elsewhere on the page ("refer to the Appendix", "see Sample data").
SENT_TO = r"\b(?:refer(?:s|red)?\s+to|see|in|from|under|at)\s+(?:the\s+)?(?:section\s+)?[\"'`*_\[]*{word}\b"


def referred_sections(reading: PageReading, blocks: list[Block], page: str) -> list[SetupCode]:
    """A later section the text or a comment sends its reader to before an example (the data the examples query,
    kept in an appendix): the reader goes there and runs its script first, so that script is the page's setup from
    the example on, when it defines a name an example between uses that nothing before that example defines."""
    runnable = [e for e in reading.examples if e.style in RUNNABLE_STYLES and e.execution_context != "not_executable"]
    made = [
        python_code.defined_by(python_code.session_source(e.code) if e.style == "doctest" else e.code) for e in runnable
    ]
    # per example, the names it uses that no example before it defines
    lacking = [_free_names(e) - set().union(*made[:position]) for position, e in enumerate(runnable)]
    referred: list[SetupCode] = []
    for position, example in enumerate(runnable):
        said = blocks[example.code_block_index].prose_before + "\n" + "\n".join(re.findall(r"#[^\n]*", example.code))
        for later_position in range(position + 1, len(runnable)):
            later = runnable[later_position]
            title = later.section_hierarchy[-1] if later.section_hierarchy else ""
            word = next(iter(re.findall(r"[A-Za-z]{4,}", title)), "")
            if (
                word
                and later.style == "script"
                and re.search(SENT_TO.format(word=re.escape(word)), said, re.IGNORECASE)
                and made[later_position] & set().union(*lacking[position:later_position])
                and all(setup.code != later.code for setup in referred)
            ):
                referred.append(SetupCode(code=later.code, line=max(example.line - 1, 0), source=page))
    return referred


def _free_names(example: CodeExample) -> set[str]:
    if example.style not in RUNNABLE_STYLES or example.execution_context == "not_executable":
        return set()
    tree = python_code.parse(python_code.session_source(example.code) if example.style == "doctest" else example.code)
    return python_code.undefined_names(tree) if tree is not None else set()


def _sources(reading: PageReading) -> list[str]:
    """The Python of the page's runnable examples and hidden setup so far."""
    runnable = [e for e in reading.examples if e.style in RUNNABLE_STYLES and e.execution_context != "not_executable"]
    return [s.code for s in reading.setup] + [
        python_code.session_source(e.code) if e.style == "doctest" else e.code for e in runnable
    ]


def read_blocks(
    blocks: list[Block], library: str, expanded: Expanded | None, page: str, text: str, version: str | None = None
) -> PageReading:
    """The page's blocks as its reader uses them; text is the page the blocks were read from (their lines in it)."""
    reading = PageReading()
    last_script: CodeExample | None = None
    builds_on_earlier = False  # a sentence so far said the blocks after it build on definitions before it
    test_module: str | None = None  # the file the page last named for a block of tests
    for index, block in enumerate(blocks):
        # The layout of a block nested in a list is not in block.code: indentation every line still shares is
        # on the page, in the code the reader copies. The example runs without it, and says it is there.
        code = textwrap.dedent(block.code)
        if _is_python_tag(block.info.language or "python"):
            code = python_code.without_old_release(code)
        if not code.strip():
            continue
        shown_indent = min((indent_of(shown) for shown in block.code.split("\n") if shown.strip()), default=0)
        info = block.info
        origin = expanded.origin(block.line) if expanded is not None else None
        line = origin.line if origin is not None else block.line
        source = origin.source if origin is not None and origin.source != page else None
        heading = block.hierarchy[-1] if block.hierarchy else ""
        builds_on_earlier = builds_on_earlier or BUILDS_ON_EARLIER.search(block.prose_before) is not None
        common = dict(
            library=library,
            code=code,
            line=line,
            context=heading,
            section_hierarchy=block.hierarchy,
            markdown_anchor=slugify(heading) if heading else None,
            code_block_index=index,
            snippet_source=source,
            builds_on_earlier=builds_on_earlier,
        )
        python2 = _for_python2(block)
        reading.requirements += [
            PageRequirement(requirement=r, line=line)
            for r in prose_requirements(block.prose_before, library)
            if not python2
        ]
        reading.prose_imports += [(max(line - 1, 0), statement) for statement in prose_imports(block.prose_before)]
        known = {page_file.path for page_file in reading.files}
        # Given on the line before the block the paragraph introduces, so the reader has it from that block on.
        reading.files += [
            PageFile(path=name, content="", url=url, line=max(line - 1, 0))
            for name, url in linked_files(block.prose_before)
            if name not in known
        ]
        needed = [
            r
            for r in _well_formed(required_installed(block.prose_before, marked=True))
            if r not in reading.prerequisites
        ]
        reading.prerequisites += needed
        reading.requirements += [PageRequirement(requirement=r, line=line) for r in needed]
        if source is not None and REQUIREMENTS_FILE.match(PurePosixPath(source).name):
            # The requirements file of an example project the page includes: its reader installs what it lists.
            wanted = file_requirements(code)
            reading.requirements += [PageRequirement(requirement=r, line=line) for r in wanted]
            reading.examples.append(
                CodeExample(
                    **common,
                    language=info.language or "text",
                    style="file",
                    execution_context="not_executable",
                    skip_reason=f"the requirements file {source}: what it lists is installed before the examples run",
                )
            )
            last_script = None
            continue
        old = shown_as_old_release(block, library, version, page)
        argued_against = TEMPTATION_INTRO.search(_last_sentence(block.prose_before))
        compared = shown_for_comparison(block, code, library)
        directive = info.directive
        if directive in SETUP_DIRECTIVES:
            reading.setup.append(SetupCode(code=code, line=line, source=page, groups=doctest_groups(info.argument)))
            continue
        if directive in DOCTEST_DIRECTIVES | SCRIPT_DIRECTIVES:
            common["doctest_groups"] = doctest_groups(info.argument)
        if directive in HIDDEN_DIRECTIVES:
            continue
        other_directive = bool(directive) and directive not in (
            DOCTEST_DIRECTIVES | SCRIPT_DIRECTIVES | OUTPUT_DIRECTIVES | CODE_DIRECTIVES
        )
        if other_directive:
            program = _holds_program(directive, code)
            helpers = _build_helpers(code, _sources(reading)) if program and _shows_a_run(directive) else []
            # A run of a program the page gives whole is code the reader runs too; of a command, or with the
            # build's own helpers, it is output to them.
            if _shows_a_run(directive) and (helpers or not program):
                reading.examples.append(
                    CodeExample(
                        **common,
                        language="text",
                        style="other",
                        execution_context="not_executable",
                        skip_reason=f"a run the docs build shows (`{directive}`)" + _run_reason(helpers),
                    )
                )
                last_script = None
                continue
            if not program:
                continue  # a directive that is not a code block at all (toctree, mermaid, a table)
        language = info.language or ("pycon" if directive in DOCTEST_DIRECTIVES else "")
        if directive in SCRIPT_DIRECTIVES:
            language = "python"
        title_file = (
            _title_file(info, code) or _option_file(block.options) or _captioned_data_file(code, block.prose_before)
        )
        session = python_code.is_session(code) and (_is_python_tag(language) or _is_neutral_tag(language))
        prose_after = blocks[index + 1].prose_before if index + 1 < len(blocks) else ""
        readers_names = sorted(set(READERS_NAME.findall(block.prose_before + "\n" + prose_after)))
        named_in_prose = sorted(set(NAME_IN_PROSE.findall(block.prose_before + "\n" + prose_after)))
        if session:
            code = python_code.definitions_prompted(
                python_code.continuations_prompted(python_code.prompts_spaced(code))
            )
            statements = python_code.session_statements(code)
            example = CodeExample(
                **{**common, "code": code},
                language="python",
                style="doctest",
                readers_names=readers_names,
                imports=python_code.imported_modules(python_code.parse(python_code.session_source(code))) or None,
            )
            # A directive's `:options: +SKIP` tells the docs' own doctest run to pass over the session; the page
            # shows it like any other, and its reader runs it.
            example.output_pictured = PICTURE.match(block.prose_after or prose_after) is not None
            if not statements:
                example.execution_context, example.skip_reason = "not_executable", "no statement to run"
            elif old:
                example.execution_context, example.skip_reason = "not_executable", _comparison_only(old)
            elif argued_against:
                example.execution_context, example.skip_reason = "not_executable", ARGUED_AGAINST
            elif compared:
                example.execution_context, example.skip_reason = "not_executable", compared
            elif python2:
                example.execution_context, example.skip_reason = "not_executable", FOR_PYTHON2_ONLY
            example.named_python = _python_named_near(python_code.session_source(code), block)
            reading.examples.append(example)
            last_script = None
            continue
        if directive in OUTPUT_DIRECTIVES or (
            last_script is not None
            and last_script.expected_output is None
            and title_file is None
            and not other_directive  # found to hold a program: code, like a Python-tagged block
            and _reads_as_output(language, code, block.prose_before)
        ):
            if last_script is not None:
                last_script.expected_output = code
                last_script.expected_output_line = line
                shown = f"example {last_script.code_block_index} (line {last_script.line})"
            else:
                shown = "no example before it"
            reading.examples.append(
                CodeExample(
                    **common,
                    language=language or "text",
                    style="output",
                    execution_context="not_executable",
                    skip_reason=f"output: what {shown} prints",
                )
            )
            last_script = None
            continue
        if _is_python_tag(language):
            # `# export NAME=value` comment lines in a Python block: what its reader sets in their shell before
            # running it, so it is set from the line before the block.
            reading.environment += [
                PageVariable(name=n, value=v, line=max(line - 1, 0)) for n, v in commented_exports(code)
            ]
        error = python_code.shown_error(code) if _is_python_tag(language) else None
        if error:
            # "…you get an error:" and the error, tagged as Python (for its colours): what the example before it
            # raises, or, with no script before it, a traceback the page shows; output either way, never code.
            if last_script is not None and last_script.expected_exception is None:
                last_script.expected_exception = error
            shown = (
                f"the {error} example {last_script.code_block_index} (line {last_script.line}) raises"
                if last_script is not None
                else f"a traceback of {error}, not code to run"
            )
            reading.examples.append(
                CodeExample(
                    **common,
                    language=language,
                    style="output",
                    execution_context="not_executable",
                    skip_reason=f"output: {shown}",
                )
            )
            last_script = None
            continue
        said_last = _last_sentence(block.prose_before)
        if (
            _is_python_tag(language)
            and said_last.rstrip().endswith(":")
            and PRINTS.search(said_last)
            and not CODE_NOUN.search(said_last)
            and python_code.parse(code) is None
        ):
            # "`help(add)` now prints the following:" and what it prints, tagged as Python for its colours: no
            # Python at all (it does not parse), and the sentence says it is what something prints.
            reading.examples.append(
                CodeExample(
                    **common,
                    language=language,
                    style="output",
                    execution_context="not_executable",
                    skip_reason="output: the sentence before it says it is what is printed",
                )
            )
            last_script = None
            continue
        # A block titled with a file that is no Python module (`requirements.txt`) and does not parse as Python
        # is that file, whatever its tag says.
        foreign_file = title_file and not title_file.endswith(".py") and python_code.parse(code) is None
        if title_file and (not _is_python_tag(language) or foreign_file):
            reading.files.append(PageFile(path=title_file, content=code, line=line))
            reading.examples.append(
                CodeExample(
                    **common,
                    language=language or "text",
                    style="file",
                    execution_context="not_executable",
                    skip_reason=f"a file the reader creates ({title_file}); it is written before the examples after it",
                )
            )
            last_script = None
            continue
        if language in SHELL_TAGS:
            wanted = [] if python2 else shell_requirements(code)
            reading.requirements += [PageRequirement(requirement=r, line=line) for r in wanted]
            reading.environment += [PageVariable(name=n, value=v, line=line) for n, v in shell_variables(code)]
            reading.file_commands += file_commands(code, language, line)
            reading.test_options += [o for o in pytest_long_options(code, language) if o not in reading.test_options]
            done = " and ".join(
                part
                for part in (
                    "its installs are made before the examples run" if wanted else "",
                    "its variables are set for the examples after it" if shell_variables(code) else "",
                )
                if part
            )
            reading.examples.append(
                CodeExample(
                    **common,
                    language=language,
                    style="shell",
                    execution_context="not_executable",
                    skip_reason="shell commands" + (f": {done}" if done else ", not Python"),
                )
            )
            last_script = None
            continue
        tree = python_code.parse(code)
        python = (
            _is_python_tag(language)
            or (_is_neutral_tag(language) and tree is not None and python_code.is_program(tree))
            or (_is_neutral_tag(language) and tree is None and python_code.shifted_program(code))
            or other_directive  # its content was found to be a program
        )
        configuration = python and not _is_python_tag(language) and python_code.opens_with_section(code)
        if not python or configuration:
            if configuration:
                reason = "configuration (a `[section]` of an INI or TOML file), not Python"
            elif language and language not in NEUTRAL_TAGS:
                reason = f"not Python ({language})"
            else:
                reason = "text, not a program"
            reading.examples.append(
                CodeExample(
                    **common,
                    language=language or "text",
                    style="other",
                    execution_context="not_executable",
                    skip_reason=reason,
                )
            )
            last_script = None
            continue
        magics = python_code.ipython_magics(code)
        magic_only = None
        if magics:
            lines = code.split("\n")
            reading.requirements += [
                PageRequirement(requirement=r, line=line + number - 1)
                for number, _ in magics
                for r in shell_requirements(lines[number - 1].lstrip("!%"))
            ]
            rest = python_code.without_leading_magics(code)
            if rest is None:
                magic_only = f"IPython magic `{magics[0][1]}`: runs only in IPython/Jupyter."
            else:
                # A cell that starts with a magic (%%time, !pip install): the rest is Python, and runs.
                code, tree = rest, python_code.parse(rest)
                common["code"] = code
        # A module included from the docs' own files (literalinclude, snippets) is shown under its file's name.
        included = Path(source).name if source and source.endswith(".py") else None
        title_file = title_file or _module_file(code, block.prose_before) or included
        tests = tree is not None and python_code.is_test_module(tree)
        if tests:
            # Tests the page does not name go where its reader keeps their tests: the test module it named last.
            title_file = title_file or test_module
            test_module = title_file if title_file and title_file.endswith(".py") else test_module
        if title_file and title_file.endswith(".py"):
            # A module the reader saves under that name: later examples import it.
            reading.files.append(PageFile(path=title_file, content=code, line=line))
        imports = python_code.imported_modules(tree)
        style = "script" if _is_python_tag(language) else "untagged"
        example = CodeExample(
            **common,
            language="python",
            # Tests (and the fixtures they use) are a module the reader saves and runs with pytest.
            style="tests" if tests else style,
            imports=imports or None,
            readers_names=readers_names,
            named_in_prose=named_in_prose,
            has_main="__main__" in code,
            shown_indent=shown_indent,
            named_python=_python_named_near(code, block),
            package_init=_package_init(code, block.prose_before),
        )
        if tree is not None and about_upgrading(block, page):
            # A page about upgrading shows the reader's own code changed: a value a block uses and never makes
            # (`limiter`, `bucket`) is their existing object. A class (`Limiter`) is still one to import.
            held = {name for name in python_code.undefined_names(tree) if not name.lstrip("_")[:1].isupper()}
            example.readers_names = sorted(set(readers_names) | held)
        not_run = placeholder_reason(code, tree, shown_indent > 0, bool(title_file and title_file.endswith(".py")))
        shape = python_code.fragment(code)
        if old:
            example.execution_context, example.skip_reason = "not_executable", _comparison_only(old)
        elif argued_against:
            example.execution_context, example.skip_reason = "not_executable", ARGUED_AGAINST
        elif compared:
            example.execution_context, example.skip_reason = "not_executable", compared
        elif python2:
            example.execution_context, example.skip_reason = "not_executable", FOR_PYTHON2_ONLY
        elif magic_only:
            example.execution_context, example.skip_reason = "not_executable", magic_only
        elif shape:
            example.execution_context, example.skip_reason = "not_executable", f"A fragment: {shape}."
            if shape == python_code.SIGNATURES_LISTED and READERS_FUNCTION.search(
                "\n".join([heading, block.prose_before, prose_after])
            ):
                example.readers_names += [s.name for s in python_code.listed_signatures(code)]
        elif not_run:
            example.execution_context, example.skip_reason = "not_executable", f"Not run: {not_run}."
        elif tree is None and not shown_indent and _right_under_an_example(block, line, reading.examples):
            # No Python, right under an example with not a word between: what that example makes (a snapshot
            # file, a report), shown in the example's colours; the page says nothing of running it.
            before = reading.examples[-1]
            example.style, example.execution_context = "output", "not_executable"
            example.skip_reason = (
                f"output: what example {before.code_block_index} (line {before.line}) makes, shown right under it "
                "with no words between; it is no Python"
            )
        elif tree is not None and python_code.awaits_at_top_level(tree):
            example.execution_context = "async"
        if tree is not None:
            raises = python_code.said_to_raise(code, tree)
            if raises:
                example.expected_exception, example.expected_exception_line = raises[0], line + raises[1] - 1
            else:
                example.expected_exception = python_code.introduced_as_failing(
                    _last_sentence(block.prose_before), tree
                ) or _tagged_to_raise(block, tree)
            if example.style == "tests" and example.expected_exception is None:
                example.expected_exception = python_code.said_after_to_fail(
                    block.prose_after or prose_after
                ) or python_code.said_in_test_to_fail(code)
        documented = python_code.documented_output(code, tree)
        if documented is not None:
            example.expected_output = documented
        reading.examples.append(example)
        last_script = example if tree is not None and example.execution_context != "not_executable" else None
    # An example's dependencies, once the whole page is read: the packages it imports that the page tells its
    # reader about (its install lines, a PyPI link, their names in its prose), which the reader installs; one the
    # page never names is not theirs to guess, and the example fails as it would for them. Modules the page lays
    # out as files (hello.py, app/__init__.py) are the reader's own, never a dependency to install from an index,
    # though a package of that name may exist there.
    # A linked file matters to the examples that use it; a page that links files it never uses downloads nothing.
    reading.files = [
        page_file
        for page_file in reading.files
        if not page_file.url or any(page_file.path in e.code for e in reading.examples if e.line > page_file.line)
    ]
    reading.setup += typed_prose_imports(reading, page)
    reading.setup += referred_sections(reading, blocks, page)
    reading.prose_names = page_names(text, blocks)
    told = reading.prose_names | {name for r in reading.requirements for name in prose_names(r.requirement)}
    page_modules = laid_out_modules(f.path for f in reading.files)
    linked = set(PYPI_PROJECT.findall(text))
    for example in reading.examples:
        example.is_executable = example.execution_context != "not_executable"
        if example.style in RUNNABLE_STYLES and example.imports:
            imports = [name for name in example.imports if name.split(".")[0] not in page_modules]
            example.dependencies = dependencies_of(imports, library, told, linked)
        if example.style == "tests" and "pytest" not in example.dependencies:
            # The reader of tests runs them with pytest, whether or not the module imports it.
            example.dependencies.append("pytest")
    return reading


# What a reader never sees of a page's text as words: comments (HTML's, MyST's `%` lines), addresses (a link's
# target, a bare URL), tags, the lines that open and close a fence.
HIDDEN_TEXT = re.compile(
    r"<!--[\s\S]*?-->|^[ \t]*%[^\n]*|\]\([^)\s]*\)|\w+://\S+|<[^>\n]+>|^[ \t]*(?:```|~~~)[^\n]*", re.MULTILINE
)


# A link to a project's repository: its README is where the reader who follows it learns to install it.
REPOSITORY = re.compile(r"(?:github\.com|gitlab\.com|codeberg\.org)/[\w.-]+/([A-Za-z0-9][\w.-]*)")


def page_names(text: str, blocks: list[Block]) -> set[str]:
    """The words of the page's prose that could name a package (its text outside its code blocks, as the reader
    sees it, the titles of its notes and dropdowns too), and the projects it links on PyPI or to the repository
    of."""
    code = {block.line + n for block in blocks for n in range(len(block.code.rstrip("\n").split("\n")))}
    prose = "\n".join("" if number in code else line for number, line in enumerate(text.split("\n"), 1))
    prose += "\n" + "\n".join(markdown_titles(text))
    linked = {name.lower() for name in PYPI_PROJECT.findall(prose)}
    linked |= {name.lower().removesuffix(".git") for name in REPOSITORY.findall(prose)}
    return {name for name in prose_names(HIDDEN_TEXT.sub(" ", prose)) if len(name) > 1 and not name.isdigit()} | linked


def _reads_as_output(language: str, code: str, prose: str) -> bool:
    """A block after a script that shows what the script prints: plain text, JSON or a displayed value, right
    after the script or after a sentence announcing it."""
    if language in SHELL_TAGS or python_code.is_session(code):
        return False
    tree = python_code.parse(code)
    if _is_python_tag(language):
        # Python-tagged, it is code, unless it is one displayed value a sentence presents as the result ("… will
        # result in the following dictionary:", "Prints out:"): run, a lone value does nothing; or text with none
        # of code's punctuation right after the script or announced (a table it prints, tagged for its colours).
        said = _last_sentence(prose).strip()
        announced = said.endswith(":") and bool(OUTPUT_CUE.search(said))
        if tree is None:
            return python_code.printed_text(code) and (announced or not prose.strip())
        return announced and (python_code.is_literal_value(tree) or python_code.is_displayed_value(tree))
    if not (_is_neutral_tag(language) or language in ("json", "console", "log")):
        return False
    if tree is not None and python_code.is_program(tree) and language != "json":
        return False
    return _announces_output(prose)


# A link to a project's PyPI page: the page names the distribution the reader installs.
PYPI_PROJECT = re.compile(r"pypi\.org/project/([A-Za-z0-9][A-Za-z0-9._-]*)")


def dependencies_of(imports: list[str], library: str, told: set[str], linked: Collection[str] = ()) -> list[str]:
    """The distributions the imports need that the page tells its reader about (told: the words of its prose and
    install lines); a module the usual convention maps to `x` comes from `pyx`, `py-x` or `python-x` when the page
    links that project on PyPI (distributions often add the prefix)."""
    own = module_names_of(library)
    prefixed = {normalized(n): n for n in linked}
    packages: list[str] = []
    for name in imports:
        if name.split(".")[0].lower() in own:
            continue
        package = distribution_for(name)
        if package:
            guess = normalized(package)
            package = next(
                (prefixed[p] for p in (f"py{guess}", f"py-{guess}", f"python-{guess}") if p in prefixed), package
            )
        if not package or normalized(package) == normalized(library) or package in packages:
            continue
        if names_package(told, name, package):
            packages.append(package)
    return packages


def doctest_groups(argument: str) -> list[str]:
    """The groups a sphinx.ext.doctest directive's argument names (`group1, group2`, `*`): "default" if none."""
    return [group.strip() for group in argument.split(",") if group.strip()] or ["default"]


def sphinx_conf(page: Path, docs_root: Path) -> Path | None:
    """The conf.py of the Sphinx project the page belongs to, as Sphinx finds it: in the page's folder or the
    nearest folder above it, up to the docs root."""
    folder = page.parent
    while True:
        if (folder / "conf.py").is_file():
            return folder / "conf.py"
        if folder == docs_root or docs_root not in folder.parents:
            return None
        folder = folder.parent


def sphinx_global_setup(page: Path, docs_root: Path) -> SetupCode | None:
    """doctest_global_setup (sphinx.ext.doctest) of the page's conf.py, read without running conf.py."""
    conf = sphinx_conf(page, docs_root)
    if conf is None:
        return None
    try:
        tree = ast.parse(conf.read_text(encoding="utf-8"))
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "doctest_global_setup" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return SetupCode(code=node.value.value, line=0, source=conf.relative_to(docs_root).as_posix())
    return None


def analyse_page(path: Path, docs_root: Path, library: str, version: str | None) -> ExtractionAnalysis | None:
    page = str(path.relative_to(docs_root).as_posix())
    if path.suffix == ".rst":
        expanded, text = None, path.read_text(encoding="utf-8")
        blocks = rst_blocks(text)
    else:
        expanded = expand(path, docs_root)
        text = expanded.text
        blocks = markdown_blocks(text)
    reading = read_blocks(blocks, library, expanded, page, text, version)
    if not reading.examples:
        return None
    setup = reading.setup
    if any(e.style == "doctest" for e in reading.examples):
        global_setup = sphinx_global_setup(path, docs_root)
        setup = ([global_setup] if global_setup else []) + setup
    return ExtractionAnalysis(
        page=page,
        library=library,
        version=version,
        language="python",
        examples=reading.examples,
        processed_at=utcnow(),
        setup=setup,
        requirements=reading.requirements,
        environment=reading.environment,
        files=reading.files,
        file_commands=reading.file_commands,
        test_options=reading.test_options,
        prose_names=sorted(reading.prose_names),
        prerequisites=reading.prerequisites,
        install_choices=install_choices(text, page, library),
        installation_lines=[] if path.suffix == ".rst" else installation_lines(text, page),
    )


def _glob_matches(relative: str, include: str) -> bool:
    """A glob as people write them: `**/` is any number of folders, none too (`docs/**/*.md` holds docs/x.md)."""
    return fnmatch.fnmatch(relative, include) or (
        "**/" in include and fnmatch.fnmatch(relative, include.replace("**/", ""))
    )


def doc_pages(docs: Path, include: str | None = None) -> list[Path]:
    """The pages of a docs folder extraction reads, in order: markdown, MDX and reStructuredText files matching
    the include glob (relative to the folder), outside .git and node_modules."""
    pages = []
    for path in sorted(p for p in Path(docs).rglob("*") if p.is_file() and p.suffix.lower() in DOC_SUFFIXES):
        relative = path.relative_to(docs).as_posix()
        if include and not _glob_matches(relative, include):
            continue
        if ".git" in path.parts or "node_modules" in path.parts:
            continue
        pages.append(path)
    return pages


def extract_docs(
    docs: Path,
    library: str,
    version: str | None,
    include: str | None = None,
    on_page: Callable[[], None] | None = None,
) -> ExtractionReport:
    """Every page's code examples; on_page is called as each page is read (for a progress bar)."""
    docs = Path(docs)
    report = ExtractionReport()
    for path in doc_pages(docs, include):
        relative = path.relative_to(docs).as_posix()
        if on_page:
            on_page()
        try:
            if path.stat().st_size > MAX_DOC_BYTES:
                report.warnings.append(f"{relative}: skipped, larger than {MAX_DOC_BYTES} bytes")
                continue
            if b"\0" in path.read_bytes()[:8000]:
                report.warnings.append(f"{relative}: skipped, not a text file")
                continue
            analysis = analyse_page(path, docs, library, version)
        except UnicodeDecodeError:
            report.warnings.append(f"{relative}: skipped, not UTF-8 text")
            continue
        except OSError as exc:
            report.warnings.append(f"{relative}: skipped, cannot read ({exc.strerror})")
            continue
        if analysis is not None:
            report.analyses.append((relative, analysis))
    read = [analysis for _, analysis in report.analyses]
    # A feature's prerequisite is told to every reader of the docs who uses that feature, on any page.
    installs = installation_requirements(read)
    everywhere = list(dict.fromkeys(installs + [p for a in read for p in a.prerequisites]))
    # A program the docs show running the reader's files (on a CLI page) runs them for every page's reader.
    commands = [command for analysis in read for command in analysis.file_commands]
    chosen = list(
        dict.fromkeys(
            first_library_install(installs, library) + [c for analysis in read for c in analysis.install_choices]
        )
    )
    aliases = docs_aliases(read)
    for _, analysis in report.analyses:
        analysis.docs_requirements = everywhere
        analysis.docs_installs = chosen
        analysis.docs_aliases = aliases
        analysis.docs_file_commands = commands
    return report


# A page or section that tells the reader how to install the library before anything else.
INSTALLATION = re.compile(r"\binstall(?:ation|ing)?\b|\bgetting[ _-]started\b|\bquick[ _-]?start\b", re.IGNORECASE)


def docs_aliases(analyses: list[ExtractionAnalysis]) -> dict[str, str]:
    """The names the docs' runnable examples import modules under, each the first way the docs import it."""
    aliases: dict[str, str] = {}
    for analysis in analyses:
        for example in analysis.examples:
            if example.style not in RUNNABLE_STYLES:
                continue
            source = python_code.session_source(example.code) if example.style == "doctest" else example.code
            tree = python_code.parse(source)
            for alias, module in (python_code.module_aliases(tree) if tree is not None else {}).items():
                aliases.setdefault(alias, module)
    return aliases


def first_library_install(installs: list[str], library: str) -> list[str]:
    """The library with its extras, when the first of the docs' installation lines (installation_requirements) that
    installs it gives extras (`pip install lib[cli,lxml]` under "Installation"): what every reader ran before any
    page. A plain first line makes the extras further down optional."""
    for requirement in installs:
        try:
            parsed = Requirement(requirement)
        except InvalidRequirement:
            continue
        if normalized(parsed.name) == normalized(library):
            return [requirement] if parsed.extras else []
    return []


def installation_requirements(analyses: list[ExtractionAnalysis]) -> list[str]:
    """What the install lines of the docs' installation pages (or sections: a README's `## Installation`) name:
    a reader follows them first, and has what they install on every page after."""
    found: list[str] = []
    for analysis in analyses:
        found += analysis.installation_lines
        for example in analysis.examples:
            places = [PurePosixPath(analysis.page).stem, *example.section_hierarchy]
            if example.style == "shell" and any(INSTALLATION.search(place) for place in places):
                found += shell_requirements(example.code)
    return list(dict.fromkeys(found))
