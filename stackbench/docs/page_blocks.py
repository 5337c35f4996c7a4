"""A docs page read into the blocks its reader sees: markdown fences (MkDocs admonitions and tabs opened, MyST
directives that hold markdown read inside, MyST's {eval-rst} fences read as the reST they render) and
reStructuredText directives, each with the headings above it and the prose just before it. A reST directive that
holds reST (a note, a tab) is read inside; any other is one block, whatever its name (`.. code-block::`, a
theme's own `.. domain:example::`). What each block is for is the extractor's business."""

import re
from dataclasses import dataclass, field

from stackbench.lib.markdown import FenceInfo, fence_info, tokens

# MyST directives whose content is markdown to read inside (notes, tabs, cards...).
MARKDOWN_DIRECTIVES = {
    "note",
    "warning",
    "tip",
    "important",
    "hint",
    "caution",
    "attention",
    "danger",
    "error",
    "seealso",
    "admonition",
    "versionadded",
    "versionchanged",
    "deprecated",
    "tab-item",
    "tab-set",
    "dropdown",
    "card",
    "grid-item",
    "grid-item-card",
    "grid",
    "div",
    "margin",
    "sidebar",
    "topic",
    "rubric",
    "todo",
    "only",
    "container",
}
# MyST directives whose content is code, whatever it holds (a markdown source shown with its fences).
MYST_CODE_DIRECTIVES = {
    "code-block",
    "code",
    "sourcecode",
    "code-cell",
    "testcode",
    "testsetup",
    "testcleanup",
    "doctest",
}
# A fence opening inside a directive's content: a directive of an extension the page uses (a `{collapse}`, a
# theme's `{example}`) that nests fences holds markdown, as a known note does.
NESTED_FENCE = re.compile(r"^[ ]{0,3}(?:`{3,}|~{3,})")
MKDOCS_CONTAINER = re.compile(r"^(\s*)(?:!!!|\?\?\?\+?|===)\s")
# The `>` marks (and the spaces around them) that open a blockquote line: `> `, `> > `.
BLOCKQUOTE = re.compile(r"^(?:[ ]{0,3}>[ ]?)*")
# Any directive, a domain's too (`.. py:function::`, `.. click:example::`); not a comment, target or substitution.
RST_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([A-Za-z][\w.-]*(?::[A-Za-z][\w.-]*)*)::(?:\s+(.*?))?\s*$")
RST_CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "code-tab"}
# MyST's fence whose content is reST, rendered as if the page were a .rst file.
EVAL_RST = "eval-rst"
# The tokens whose text is prose: a paragraph, and a definition list's term (`Install the extra:` above a
# `: ```console` definition).
PROSE_OPENERS = ("paragraph_open", "dt_open")
RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")


def slugify(text: str) -> str:
    """GitHub-style heading anchor."""
    text = re.sub(r"[`*_~\[\]()]", "", text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return re.sub(r"\s", "-", text)


@dataclass
class Block:
    """A fence as the page shows it."""

    info: FenceInfo
    code: str
    line: int  # 1-based line of the expanded page where the code starts
    hierarchy: list[str]
    prose_before: str = ""  # the text between the previous block and this one
    options: dict[str, str] = field(default_factory=dict)  # a MyST directive's :options:
    section_before: str = ""  # the text of its section before it, notes and warnings too
    prose_after: str = ""  # the text after it, up to the next block or heading


def open_mkdocs_containers(text: str) -> str:
    """MkDocs admonitions (!!! note) and content tabs (=== "Tab") indent their content by four spaces, which
    CommonMark would read as an indented code block or a paragraph: dedent it in place (lines keep their
    numbers) so the fences inside are read as fences. A container inside a blockquote (`> === "Tab"`, as callout
    extensions write notes) is opened the same way behind the quote's `>` marks."""
    lines = text.split("\n")
    out: list[str] = []
    opened: list[tuple[str, int]] = []  # the quote marks and indent of the containers the line may sit in
    for line in lines:
        marked = BLOCKQUOTE.match(line)
        quote = marked.group(0) if marked else ""
        rest = line[len(quote) :]
        stripped = rest.strip()
        indent = len(rest) - len(rest.lstrip())
        marks = quote.count(">")
        while opened and (opened[-1][0].count(">") > marks or (stripped and indent < opened[-1][1] + 4)):
            opened.pop()
        shift = 4 * sum(1 for marks_of, _ in opened if marks_of == quote)
        out.append(quote + (rest[shift:] if rest[:shift].strip() == "" else rest))
        if MKDOCS_CONTAINER.match(rest):
            out[-1] = quote.rstrip()
            opened.append((quote, indent))
    return "\n".join(out)


# A MyST comment line (`% skip: next`): in the source, never on the page its reader reads.
MYST_COMMENT = re.compile(r"^%")


def _without_comments(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not MYST_COMMENT.match(line))


def markdown_blocks(
    text: str, first_line: int = 1, hierarchy: list[str] | None = None, section_before: str = ""
) -> list[Block]:
    """The blocks of markdown text; first_line is the page line the text starts on, hierarchy the headings
    above it and section_before the text of its section before it (for a directive's content)."""
    blocks: list[Block] = []
    stack = [(0, title) for title in hierarchy or []]
    parsed = tokens(open_mkdocs_containers(text))
    prose: list[str] = []
    section = [section_before] if section_before else []
    for index, token in enumerate(parsed):
        if token.type == "heading_open":
            if blocks and not blocks[-1].prose_after:
                blocks[-1].prose_after = "\n".join(prose)
            level = int(token.tag[1])
            title = parsed[index + 1].content.strip()
            stack = [item for item in stack if item[0] < level] + [(level, title)]
            prose = [title]  # a block under a new heading does not continue the one before it
            section = [title]
        elif token.type == "inline" and parsed[index - 1].type in PROSE_OPENERS:
            said = _without_comments(token.content)
            if said:
                prose.append(said)
                section.append(said)
        elif token.type == "fence" and token.map:
            info = fence_info(token.info)
            line = first_line + token.map[0] + 1
            titles = [title for _, title in stack]
            if _holds_markdown(info.directive, token.content):
                body, skipped = _directive_body(token.content)
                blocks += markdown_blocks(body, line + skipped, titles, "\n".join(section))
                prose = []
                section.append(body)
                continue
            if info.directive == EVAL_RST:
                blocks += rst_blocks(token.content, line, titles, "\n".join(prose), "\n".join(section))
                prose = []
                continue
            content, skipped = token.content, 0
            options: dict[str, str] = {}
            if info.directive:
                content, options, skipped = directive_options(token.content)
            if blocks and not blocks[-1].prose_after:
                blocks[-1].prose_after = "\n".join(prose)
            blocks.append(Block(info, content, line + skipped, titles, "\n".join(prose), options, "\n".join(section)))
            prose = []
    if blocks and not blocks[-1].prose_after:
        blocks[-1].prose_after = "\n".join(prose)
    return blocks


@dataclass
class MarkdownList:
    """A list of a markdown page: the headings above it and the text of each of its items (their first
    paragraph)."""

    hierarchy: list[str]
    items: list[str] = field(default_factory=list)


def markdown_lists(text: str) -> list[MarkdownList]:
    """The page's lists (nested ones apart from those they sit in), in the order they end."""
    found: list[MarkdownList] = []
    stack: list[tuple[int, str]] = []
    open_lists: list[MarkdownList] = []
    parsed = tokens(open_mkdocs_containers(text))
    for index, token in enumerate(parsed):
        if token.type == "heading_open":
            level = int(token.tag[1])
            stack = [item for item in stack if item[0] < level] + [(level, parsed[index + 1].content.strip())]
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            open_lists.append(MarkdownList([title for _, title in stack]))
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            found.append(open_lists.pop())
        elif token.type == "inline" and open_lists and index > 1 and parsed[index - 2].type == "list_item_open":
            open_lists[-1].items.append(token.content)
    return found


@dataclass
class MarkdownPiece:
    """A paragraph (or list item, or heading) or a fence of a page, under the titles of the sections it is in."""

    hierarchy: list[str]
    content: str
    language: str | None = None  # a fence's; None for prose


def markdown_pieces(text: str) -> list[MarkdownPiece]:
    """The page's prose and fences in page order, each with its sections' titles."""
    found: list[MarkdownPiece] = []
    stack: list[tuple[int, str]] = []
    parsed = tokens(open_mkdocs_containers(text))
    for index, token in enumerate(parsed):
        if token.type == "heading_open":
            level = int(token.tag[1])
            stack = [item for item in stack if item[0] < level] + [(level, parsed[index + 1].content.strip())]
        elif token.type == "inline" and index and parsed[index - 1].type != "heading_open":
            found.append(MarkdownPiece([title for _, title in stack], token.content))
        elif token.type == "fence":
            found.append(MarkdownPiece([title for _, title in stack], token.content, fence_info(token.info).language))
    return found


def markdown_titles(text: str) -> list[str]:
    """The titles of the MyST directives whose markdown the reader opens (a note's, a dropdown's, a collapse's
    argument): prose they read. Another directive's argument is a language, a path or an object to document."""
    titles: list[str] = []
    for token in tokens(open_mkdocs_containers(text)):
        info = fence_info(token.info) if token.type == "fence" else None
        if info is not None and _holds_markdown(info.directive, token.content):
            titles += [info.argument] if info.argument else []
            titles += markdown_titles(_directive_body(token.content)[0])
    return titles


def _holds_markdown(directive: str, content: str) -> bool:
    """A MyST directive whose content is markdown to read inside: known by name, or by the fences it nests."""
    if not directive or directive == EVAL_RST or directive in MYST_CODE_DIRECTIVES:
        return False
    if directive in MARKDOWN_DIRECTIVES or directive.startswith("tab"):
        return True
    return any(NESTED_FENCE.match(line) for line in content.split("\n"))


def _directive_body(content: str) -> tuple[str, int]:
    """A MyST directive's content without its leading options (and how many lines those were)."""
    body, _, skipped = directive_options(content)
    return body, skipped


def directive_options(content: str) -> tuple[str, dict[str, str], int]:
    """A MyST directive's content without its leading options (`:key: value` lines, or a `---` block of
    `key: value` lines), the options, and how many lines they took."""
    lines = content.split("\n")
    options: dict[str, str] = {}
    skipped = 0
    if lines and lines[0].strip() == "---" and "---" in (line.strip() for line in lines[1:]):
        end = next(n for n in range(1, len(lines)) if lines[n].strip() == "---")
        for line in lines[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        skipped = end + 1
    while skipped < len(lines) and (match := re.match(r"^\s*:([\w-]+):\s*(.*)$", lines[skipped])):
        options[match.group(1)] = match.group(2).strip()
        skipped += 1
    while skipped < len(lines) - 1 and not lines[skipped].strip() and options:
        skipped += 1
    return "\n".join(lines[skipped:]), options, skipped


# Tabs hold reST (sphinx-tabs' `.. tabs::` and `.. group-tab::`, sphinx-design's `.. tab-set::`).
TAB_DIRECTIVE = re.compile(r"^(?:[\w]+-)?tabs?(?:-[\w]+)?$")
DOCTEST_PARAGRAPH = re.compile(r"^\s*>>> ")


def _holds_rst(name: str, body: list[str]) -> bool:
    """A directive whose content is reST to read inside (a note, a tab set, an API entry with examples): known
    by name, or by the directives and doctest paragraphs it nests."""
    last = name.split(":")[-1]
    if last in MARKDOWN_DIRECTIVES or (TAB_DIRECTIVE.match(last) and last != "code-tab"):
        return True
    return any(RST_DIRECTIVE.match(line) or DOCTEST_PARAGRAPH.match(line) or _opens_literal(line) for line in body)


def _opens_literal(line: str) -> bool:
    """A paragraph line ending in `::` (`For example::`): the indented block after it is shown as code."""
    return line.rstrip().endswith("::") and not RST_DIRECTIVE.match(line)


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())


def _directive_parts(lines: list[str], index: int, indent: int) -> tuple[dict[str, str], int, list[str], int]:
    """The directive at lines[index]: its options (:linenos:, :caption: app.py), the index its content starts
    at, its content lines (blank ones at the end left out) and the index after it."""
    index += 1
    options: dict[str, str] = {}
    while index < len(lines) and (option := re.match(r"^\s+:(\w[\w-]*):\s*(.*)$", lines[index])):
        options[option.group(1)] = option.group(2).strip()
        index += 1
    while index < len(lines) and not lines[index].strip():
        index += 1
    start = index
    while index < len(lines) and (not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip()) > indent):
        index += 1
    body = lines[start:index]
    while body and not body[-1].strip():
        body.pop()
    return options, start, body, index


def _dedented(body: list[str]) -> str:
    margin = min((len(line) - len(line.lstrip()) for line in body if line.strip()), default=0)
    return "\n".join(line[margin:] for line in body) + "\n"


def rst_blocks(
    text: str, first_line: int = 1, hierarchy: list[str] | None = None, prose_before: str = "", section_before: str = ""
) -> list[Block]:
    """The blocks of reST text; first_line is the page line the text starts on (the line after an {eval-rst}
    fence's opening), hierarchy the headings above it, prose_before and section_before the text before it (since
    the last block, since the heading)."""
    lines = text.split("\n")
    blocks: list[Block] = []
    stack = [(0, title) for title in hierarchy or []]
    underline_order: list[str] = []
    prose = [prose_before] if prose_before else []
    section = [section_before] if section_before else []
    index = 0
    while index < len(lines):
        line = lines[index]
        if (
            index + 1 < len(lines)
            and line.strip()
            and RST_UNDERLINE.match(lines[index + 1])
            and len(lines[index + 1].strip()) >= len(line.strip())
        ):
            char = lines[index + 1].strip()[0]
            if char not in underline_order:
                underline_order.append(char)
            level = underline_order.index(char) + 1
            stack = [item for item in stack if item[0] < level] + [(level, line.strip())]
            index += 2
            prose, section = [], [line.strip()]
            continue
        titles = [title for _, title in stack]
        directive = RST_DIRECTIVE.match(line)
        if directive:
            name, argument = directive.group(2).lower(), directive.group(3) or ""
            options, start, body, end = _directive_parts(lines, index, len(directive.group(1)))
            if name not in RST_CODE_DIRECTIVES and _holds_rst(name, body):
                index = start  # its content is reST: read on inside it
                continue
            index = end
            if not body:
                continue  # a directive without content (`.. autofunction:: name`) shows no code
            if name in RST_CODE_DIRECTIVES:
                info = FenceInfo((argument.split() or ["python"])[0].lower())
            else:
                info = FenceInfo("", name, argument)
            blocks.append(
                Block(info, _dedented(body), first_line + start, titles, " ".join(prose), options, " ".join(section))
            )
            prose = []
            continue
        if DOCTEST_PARAGRAPH.match(line) and (index == 0 or not lines[index - 1].strip()):
            start = index
            while index < len(lines) and lines[index].strip():
                index += 1
            blocks.append(
                Block(
                    FenceInfo("pycon"),
                    _dedented(lines[start:index]),
                    first_line + start,
                    titles,
                    " ".join(prose),
                    section_before=" ".join(section),
                )
            )
            prose = []
            continue
        if _opens_literal(line):
            said = line.strip()[:-2].rstrip()
            if said:
                prose.append(said + ":")
                section.append(said + ":")
            start = index + 1
            while start < len(lines) and not lines[start].strip():
                start += 1
            end = start
            while end < len(lines) and (not lines[end].strip() or indent_of(lines[end]) > indent_of(line)):
                end += 1
            body = lines[start:end]
            while body and not body[-1].strip():
                body.pop()
            if body and indent_of(body[0]) > indent_of(line):
                # A literal block: Sphinx shows it highlighted as the docs' default language, Python.
                blocks.append(
                    Block(
                        FenceInfo(""),
                        _dedented(body),
                        first_line + start,
                        titles,
                        " ".join(prose),
                        {},
                        " ".join(section),
                    )
                )
                prose = []
                index = end
                continue
        elif line.strip():
            prose.append(line.strip())
            section.append(line.strip())
        index += 1
    return blocks
