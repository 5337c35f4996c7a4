"""Markdown, read and rendered by one parser: CommonMark with GitHub's tables, strikethrough, task lists and
autolinks, and definition lists (MyST's and MkDocs' `term` then `: definition`, which may hold fences).

Reading: `tokens` for a document's structure (headings, paragraphs, fences), `fenced_blocks` for its code
(``` and ~~~ fences alike, with their info string and the line their code starts on), `without_fenced_blocks`
for its prose. Every engine that looks for code in markdown uses these, so they all agree on what a fence is.

Rendering: code highlighted by Pygments; ```mermaid fences left for the browser to draw. Raw HTML is escaped
and unsafe link targets (javascript:, data:) are refused, so text from documents and agents cannot inject
script."""

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.gfm import gfm_plugin
from pygments import highlight as pygments_highlight  # type: ignore[import-untyped]  # no stubs installed
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]  # no stubs installed
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename  # type: ignore[import-untyped]  # no stubs installed
from pygments.util import ClassNotFound  # type: ignore[import-untyped]  # no stubs installed

_formatter = HtmlFormatter(nowrap=True, classprefix="hl-")


def _highlight(code: str, language: str, attrs: str) -> str:
    name = info_language(language)
    if name == "mermaid":
        return f'<pre class="mermaid">{escape(code)}</pre>'
    if not name:
        return ""
    try:
        lexer = get_lexer_by_name(name)
    except ClassNotFound:
        return ""
    body = pygments_highlight(code, lexer, _formatter)
    return f'<pre class="highlight"><code class="language-{escape(name)}">{body}</code></pre>'


_markdown = (
    MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    .use(gfm_plugin)
    .use(deflist_plugin)
)
_markdown.enable("table")


# -- reading --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FenceInfo:
    """What a fence's info string says: its language, or the MyST directive it is (```{doctest} group,
    ```{code-block} python) with the directive's argument, its attributes (title="app.py"), and the label a
    VitePress code-group gives its tab (```python [1.x])."""

    language: str
    directive: str = ""
    argument: str = ""
    attributes: tuple[tuple[str, str], ...] = ()
    label: str = ""

    def attribute(self, name: str) -> str | None:
        return dict(self.attributes).get(name)


ATTRIBUTE = re.compile(r"""([\w-]+)=("[^"]*"|'[^']*'|\S+)""")
TAB_LABEL = re.compile(r"\[([^\]]+)\]")
CODE_DIRECTIVES = ("code-block", "code", "sourcecode", "code-cell")


def fence_info(info: str | None) -> FenceInfo:
    text = (info or "").strip()
    attributes = tuple((m.group(1), m.group(2).strip("\"'")) for m in ATTRIBUTE.finditer(text))
    words = ATTRIBUTE.sub("", text).split()
    if not words:
        return FenceInfo("", attributes=attributes)
    first = words[0]
    if first.startswith("{") and first.endswith("}") and len(first) > 2 and not first.startswith("{."):
        directive, argument = first[1:-1].lower(), " ".join(words[1:])
        language = argument.split()[0].lower() if directive in CODE_DIRECTIVES and argument else ""
        return FenceInfo(language, directive, argument, attributes)
    label = TAB_LABEL.search(" ".join(words[1:]))
    # VuePress and VitePress write display options onto the language (python{2,4}, bash:no-line-numbers).
    language = re.split(r"[:{]", first.lower().strip("{}.").removeprefix("language-"), maxsplit=1)[0]
    return FenceInfo(
        language,
        attributes=attributes,
        label=label.group(1).strip() if label else "",
    )


def info_language(info: str | None) -> str:
    """The language a fence's info string names: its first word, lower-cased, without MyST/Pandoc braces or dots
    (```{python}, ```{.python}, ```Python title="x.py" all say python; ```title="x" says none; a MyST
    directive names itself, ```{code-block} python its argument)."""
    parsed = fence_info(info)
    return parsed.language or parsed.directive


@dataclass(frozen=True)
class FencedBlock:
    info: str  # the whole info string: language and attributes (title="app.py")
    language: str
    content: str
    line: int  # 1-based line of the page where the code starts (the line after the opening fence)
    start: int  # 0-based line of the opening fence
    end: int  # 0-based line after the closing fence


def tokens(text: str) -> list[Token]:
    return _markdown.parse(text or "")


def fenced_blocks(text: str) -> list[FencedBlock]:
    return [_block(token) for token in tokens(text) if token.type == "fence" and token.map]


def _block(token: Token) -> FencedBlock:
    assert token.map is not None, "fenced_blocks passes only fences with a line map"
    start, end = token.map
    return FencedBlock(token.info.strip(), info_language(token.info), token.content, start + 2, start, end)


def without_fenced_blocks(text: str, replacement: str = "") -> str:
    """The text with every fenced block (fences included) replaced, for reading only the prose."""
    lines = (text or "").split("\n")
    kept, position = [], 0
    for block in fenced_blocks(text):
        kept += lines[position : block.start]
        if replacement:
            kept.append(replacement)
        position = block.end
    kept += lines[position:]
    return "\n".join(kept)


# -- rendering ------------------------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def render_markdown(text: str, asset_base: str = "") -> str:
    """HTML for markdown text; cached because walkthrough steps are rendered on every page view. With
    asset_base (a URL ending in /), relative image paths point there: docs show images that live beside them."""
    if not asset_base:
        return _markdown.render(text or "")
    env: dict[str, Any] = {}
    tokens = _markdown.parse(text or "", env)
    for token in tokens:
        for child in token.children or []:
            source = child.attrGet("src") if child.type == "image" else None
            if isinstance(source, str) and source and not RELATIVE_EXEMPT.match(source):
                child.attrSet("src", asset_base + quote(posixpath.normpath(source.split("#")[0])))
    return _markdown.renderer.render(tokens, _markdown.options, env)


# Image sources that are not paths inside the docs: URLs, absolute paths, data and anchors.
RELATIVE_EXEMPT = re.compile(r"^(?:[a-zA-Z][\w+.-]*:|/|#)")


CODE_SPAN = re.compile(r"(`+)(.+?)\1")


@lru_cache(maxsize=8192)
def render_inline(text: str) -> str:
    """One line of a finding (code spans and links) without a paragraph around it. Its text comes from tools,
    where `_` and `*` are names (`__init__.py`, `*.txt`), never emphasis: they are shown as typed."""
    parts = CODE_SPAN.split(text or "")
    kept = []
    for index in range(0, len(parts), 3):
        kept.append(re.sub(r"([_*~])", r"\\\1", parts[index]))
        if index + 2 < len(parts):
            kept.append(parts[index + 1] + parts[index + 2] + parts[index + 1])
    return _markdown.renderInline("".join(kept))


def highlight_code(code: str, language: str = "python") -> str:
    """A highlighted <pre> block for a code string outside markdown (examples, executed code, diffs)."""
    return _highlight(code, language, "") or f"<pre><code>{escape(code)}</code></pre>"


class TextRow(Protocol):
    """A row of a diff: its kind (add, del, context, hunk, note) and its line of text."""

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...


Row = TypeVar("Row", bound=TextRow)


def highlight_rows(rows: Iterable[Row], filename: str) -> list[tuple[Row, str]]:
    """Diff rows with each line's text highlighted for the file's language (escaped when unknown)."""
    try:
        lexer = get_lexer_for_filename(filename)
    except ClassNotFound:
        lexer = None
    shown = []
    for row in rows:
        if lexer is not None and row.kind in ("add", "del", "context"):
            html = pygments_highlight(row.text, lexer, _formatter).rstrip("\n")
        else:
            html = escape(row.text)
        shown.append((row, html))
    return shown
