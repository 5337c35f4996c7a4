"""Markdown to safe HTML: CommonMark with GitHub's tables, strikethrough, task lists and autolinks; code
highlighted by Pygments; ```mermaid fences left for the browser to draw. Raw HTML is escaped and unsafe link
targets (javascript:, data:) are refused, so text from documents and agents cannot inject script."""
from functools import lru_cache
from html import escape

from markdown_it import MarkdownIt
from mdit_py_plugins.gfm import gfm_plugin
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.util import ClassNotFound

_formatter = HtmlFormatter(nowrap=True, classprefix="hl-")


def _highlight(code: str, language: str, attrs) -> str:
    name = (language or "").split()[0].lower() if language else ""
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


def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight}).use(gfm_plugin)
    md.enable("table")
    return md


_markdown = _renderer()


@lru_cache(maxsize=4096)
def render_markdown(text: str) -> str:
    """HTML for markdown text; cached because walkthrough steps are rendered on every page view."""
    return _markdown.render(text or "")


@lru_cache(maxsize=8192)
def render_inline(text: str) -> str:
    """One line of markdown (code spans, emphasis, links) without a paragraph around it."""
    return _markdown.renderInline(text or "")


def highlight_code(code: str, language: str = "python") -> str:
    """A highlighted <pre> block for a code string outside markdown (examples, executed code, diffs)."""
    return _highlight(code, language, None) or f"<pre><code>{escape(code)}</code></pre>"


def pygments_css() -> str:
    return _formatter.get_style_defs(".highlight")


def highlight_rows(rows, filename: str):
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
