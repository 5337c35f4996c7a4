"""A docs page read into the blocks its reader sees: markdown fences (MkDocs admonitions and tabs opened, MyST
directives that hold markdown read inside) and reStructuredText code directives, each with the headings above it
and the prose just before it. What each block is for is the extractor's business."""

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
MKDOCS_CONTAINER = re.compile(r"^(\s*)(?:!!!|\?\?\?\+?|===)\s")
RST_DIRECTIVE = re.compile(
    r"^(\s*)\.\.\s+(code-block|code|sourcecode|doctest|testsetup|testcleanup|testcode|testoutput)::\s*(.*?)\s*$"
)
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


def open_mkdocs_containers(text: str) -> str:
    """MkDocs admonitions (!!! note) and content tabs (=== "Tab") indent their content by four spaces, which
    CommonMark would read as an indented code block or a paragraph: dedent it in place (lines keep their
    numbers) so the fences inside are read as fences."""
    lines = text.split("\n")
    out: list[str] = []
    opened: list[int] = []  # indents of the containers the current line may sit in
    for line in lines:
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        while opened and stripped and indent < opened[-1] + 4:
            opened.pop()
        shift = 4 * len(opened)
        out.append(line[shift:] if line[:shift].strip() == "" else line)
        if MKDOCS_CONTAINER.match(line):
            out[-1] = ""
            opened.append(indent)
    return "\n".join(out)


def markdown_blocks(text: str, first_line: int = 1, hierarchy: list[str] | None = None) -> list[Block]:
    blocks: list[Block] = []
    stack = [(0, title) for title in hierarchy or []]
    parsed = tokens(open_mkdocs_containers(text))
    prose: list[str] = []
    for index, token in enumerate(parsed):
        if token.type == "heading_open":
            level = int(token.tag[1])
            title = parsed[index + 1].content.strip()
            stack = [item for item in stack if item[0] < level] + [(level, title)]
            prose = [title]  # a block under a new heading does not continue the one before it
        elif token.type == "inline" and parsed[index - 1].type == "paragraph_open":
            prose.append(token.content)
        elif token.type == "fence" and token.map:
            info = fence_info(token.info)
            line = first_line + token.map[0] + 1
            titles = [title for _, title in stack]
            if info.directive in MARKDOWN_DIRECTIVES or (info.directive and info.directive.startswith("tab")):
                body, skipped = _directive_body(token.content)
                blocks += markdown_blocks(body, line + skipped, titles)
                prose = []
                continue
            content, skipped = token.content, 0
            options: dict[str, str] = {}
            if info.directive:
                content, options, skipped = directive_options(token.content)
            blocks.append(Block(info, content, line + skipped, titles, "\n".join(prose), options))
            prose = []
    return blocks


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


def rst_blocks(text: str) -> list[Block]:
    lines = text.split("\n")
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    underline_order: list[str] = []
    prose: list[str] = []
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
            prose = []
            continue
        directive = RST_DIRECTIVE.match(line)
        doctest_paragraph = line.lstrip().startswith(">>> ") and (index == 0 or not lines[index - 1].strip())
        if directive or doctest_paragraph:
            indent = len(directive.group(1)) if directive else len(line) - len(line.lstrip())
            start = index
            if directive:
                index += 1
                while index < len(lines) and re.match(r"^\s+:\w[\w-]*:", lines[index]):
                    index += 1  # directive options such as :linenos:
                while index < len(lines) and not lines[index].strip():
                    index += 1
                start, body = index, []
                while index < len(lines) and (
                    not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip()) > indent
                ):
                    body.append(lines[index])
                    index += 1
            else:
                body = []
                while index < len(lines) and lines[index].strip():
                    body.append(lines[index])
                    index += 1
            while body and not body[-1].strip():
                body.pop()
            margin = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
            code = "\n".join(b[margin:] for b in body) + "\n"
            if directive and directive.group(2) in ("code-block", "code", "sourcecode"):
                info = FenceInfo(directive.group(3).lower() or "python")
            elif directive:
                info = FenceInfo("", directive.group(2), directive.group(3))
            else:
                info = FenceInfo("pycon")
            blocks.append(Block(info, code, start + 1, [t for _, t in stack], " ".join(prose)))
            prose = []
            continue
        if line.strip():
            prose.append(line.strip())
        index += 1
    return blocks
