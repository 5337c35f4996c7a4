"""What of a step its reader does not follow as written: the ways they do not take (the other tabs of a tab group,
sibling sub-sections for other systems or tools, a shell block's lines for other tools) and the placeholders
they must fill in first."""

import re

from stackbench.docs.shell_words import command_words
from stackbench.docs.tutorial_text import OPERATING_SYSTEMS, PLACEHOLDER, SUBHEADING, TAB, WAY_WORDS

# Tab groups of other toolchains, one way per tab: VitePress's `::: code-group` (one fence per tab), PyMdown's
# consecutive `/// tab | npm` blocks, Docusaurus's `<Tabs>` of `<TabItem>`s and sphinx-design's `{tab-set}`.
CODE_GROUP = re.compile(r"^(\s*):{3,}\s*code-group\s*\n(.*?)^\1:{3,}\s*$", re.MULTILINE | re.DOTALL)
FENCE_IN_GROUP = re.compile(r"^(\s*)(`{3,}|~{3,}).*?^\1\2\s*$", re.MULTILINE | re.DOTALL)
PYMDOWN_TABS = re.compile(r"(?:^///\s*tab\s*\|.*?^///\s*$\n?(?:\s*\n)*)+", re.MULTILINE | re.DOTALL)
PYMDOWN_TAB = re.compile(r"^///\s*tab\s*\|.*?\n(.*?)^///\s*$", re.MULTILINE | re.DOTALL)
JSX_TABS = re.compile(r"^\s*<Tabs\b[^>]*>(.*?)^\s*</Tabs>\s*$", re.MULTILINE | re.DOTALL)
JSX_TAB = re.compile(r"<TabItem\b[^>]*>(.*?)</TabItem>", re.DOTALL)
SPHINX_TABS = re.compile(r"^(:{3,}|`{3,})\{tab-set(?:-code)?\}[^\n]*\n(.*?)^\1\s*$", re.MULTILINE | re.DOTALL)
SPHINX_TAB = re.compile(
    r"^(:{3,}|`{3,})\{tab-item\}[^\n]*\n(?:[ \t]*:[\w-]+:[^\n]*\n)*(.*?)^\1\s*$", re.MULTILINE | re.DOTALL
)


def first_of_tab_groups(markdown: str) -> str:
    """The first tab of each group of the toolchains other than MkDocs (see first_tabs_only), as plain text."""

    def first(pattern: re.Pattern[str], body: str, group: int) -> str:
        tab = pattern.search(body)
        return tab.group(group).strip("\n") + "\n" if tab else body

    markdown = CODE_GROUP.sub(lambda m: first(FENCE_IN_GROUP, m.group(2), 0), markdown)
    markdown = PYMDOWN_TABS.sub(lambda m: first(PYMDOWN_TAB, m.group(0), 1) + "\n", markdown)
    markdown = JSX_TABS.sub(lambda m: first(JSX_TAB, m.group(1), 1), markdown)
    return SPHINX_TABS.sub(lambda m: first(SPHINX_TAB, m.group(2), 2), markdown)


def first_tabs_only(markdown: str) -> str:
    """MkDocs content tabs (`=== "npm"` then an indented body) offer one way per tab: the reader follows the
    first tab of each group. Its body is dedented so its code reads as code; the other tabs are dropped. Tab
    groups of other toolchains are read the same way."""
    markdown = first_of_tab_groups(markdown)
    if "=== " not in markdown:
        return markdown
    lines, kept, index = markdown.split("\n"), [], 0
    while index < len(lines):
        header = TAB.match(lines[index])
        if not header:
            kept.append(lines[index])
            index += 1
            continue
        indent, first = len(header.group(1)), True
        while index < len(lines) and (header := TAB.match(lines[index])) and len(header.group(1)) == indent:
            index += 1
            body = []
            while index < len(lines) and (not lines[index].strip() or _indent(lines[index]) > indent):
                body.append(lines[index])
                index += 1
            if first:
                kept += [line[indent + 4 :] if line.strip() else "" for line in body]
            first = False
    return "\n".join(kept)


def first_branch_only(markdown: str) -> str:
    """Sibling sub-sections that are ways to the same end ("New project" / "Existing project", "Using pip" /
    "Using conda", "On Windows" / "On Linux"): the reader follows one; the first, or the one for Linux (the
    machine the audit runs on). Other sub-sections are parts of the step, all followed."""
    lines = markdown.split("\n")
    headings = [
        (index, len(m.group(1)), m.group(2)) for index, line in enumerate(lines) if (m := SUBHEADING.match(line))
    ]
    if len(headings) < 2:
        return markdown
    level = min(depth for _, depth, _ in headings)
    siblings = [(index, title) for index, depth, title in headings if depth == level]
    words = [set(re.findall(r"[a-z]+", title.lower())) for _, title in siblings]
    systems = [bool(w & OPERATING_SYSTEMS) for w in words]
    first_words = {title.split()[0].lower().rstrip(":") for _, title in siblings}
    ways = (len(first_words) == 1 and first_words <= WAY_WORDS) or first_words == {"new", "existing"}
    if len(siblings) < 2 or not (all(systems) or ways):
        return markdown
    chosen = (
        next((n for n, w in enumerate(words) if {"linux", "ubuntu", "debian", "unix"} & w), 0) if all(systems) else 0
    )
    ends = [index for index, _ in siblings[1:]] + [len(lines)]
    keep = set(range(siblings[0][0]))
    keep |= set(range(siblings[chosen][0], ends[chosen]))
    return "\n".join(line for number, line in enumerate(lines) if number in keep)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def first_way_only(body: str) -> tuple[str, list[str]]:
    """A shell block listing one way per tool, each under its own comment (`# npm`, `# yarn`, `# pnpm`): the
    reader types the first way; the first lines of the others are the ways skipped. Anything else is returned
    whole."""
    groups = [group for group in re.split(r"\n\s*\n", body.strip()) if group.strip()]
    if len(groups) < 2 or not all(group.lstrip().startswith("#") for group in groups):
        return body, []
    tools = [next(iter(command_words(group)), "") for group in groups]
    if not all(tools) or len(set(tools)) < len(tools):
        return body, []
    return groups[0] + "\n", [first_line(re.sub(r"^\s*#.*\n", "", group)) for group in groups[1:]]


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:120]


def placeholders(text: str, prose: str) -> list[tuple[str, bool]]:
    """The placeholders in what the reader types (`<your key>`, `YOUR_TOKEN`), each with whether the step's prose
    explains what to put there."""
    found = []
    for match in PLACEHOLDER.finditer(text):
        explained = (
            re.search(
                r"\b(replace|substitute|where|fill in|your own)\b[^.\n]*" + re.escape(match.group(0)),
                prose,
                re.IGNORECASE,
            )
            is not None
        )
        found.append((match.group(0), explained))
    return found
