"""Rule-based walkthrough generation (the pipeline's "generate" stage): a tutorial page becomes a walkthrough
export, one step per second-level section (or per numbered step when the page has none), with operations
derived from its code blocks and imperative sentences. The id is wt_ plus eight hex characters of the content
hash, so regenerating an unchanged page gives the same id."""

import hashlib
import re
from pathlib import Path

from stackbench.docs.includes import expand
from stackbench.docs.shell_words import split_shell_lines
from stackbench.docs.tutorial_text import (
    FILE_INTRO,
    OUTPUT_LANGUAGES,
    PYTHON_LANGUAGES,
    SHELL_LANGUAGES,
    is_file_path,
)
from stackbench.formats.walkthrough import WalkthroughExport
from stackbench.lib.markdown import info_language, tokens, without_fenced_blocks

IMPERATIVE = re.compile(
    r"^(?:Now,?\s+|Next,?\s+|Then,?\s+|First,?\s+|Finally,?\s+)?(Create|Run|Install|Open|Add|Set|Export|"
    r"Copy|Edit|Update|Start|Navigate|Configure|Change|Replace|Download|Clone|Enter|Type|Make|Save|"
    r"Import|Call|Define|Activate|Initiali[sz]e|Execute|Build|Deploy|Restart|Stop|Visit|Go|Tune|Apply|Adjust|"
    r"Use|Write|Check|Verify|Test|Load|Insert|Query|Read|Remove|Delete|Register|Connect)\b",
    re.IGNORECASE,
)
SUCCESS = re.compile(
    r"\b(should (see|print|show|return|display)|you('ll| will) see|prints?|outputs?|returns?)\b", re.IGNORECASE
)
CONTRIBUTOR_SECTION = re.compile(
    r"(?:development|developing|contributing|contribution|contributions|contributors|license|licen[cs]e and .*|"
    r"changelog|change log|credits|sponsors|backers|code of conduct|security|support|authors|maintainers)[:.]?",
    re.IGNORECASE,
)
STEP_HEADING = re.compile(r"^(?:step\s+)?\d+[.):]?\s+", re.IGNORECASE)


def _sentences(markdown: str) -> list[str]:
    prose = without_fenced_blocks(markdown, "\n")
    prose = "\n".join(line for line in prose.splitlines() if not line.lstrip().startswith("#"))
    prose = re.sub(r"\s+", " ", prose)
    return [s.strip() for s in re.split(r"(?<=[.!?:])\s+", prose) if s.strip()]


def _sections(text: str) -> tuple[str, str, list[tuple[str, str]]]:
    """(title, introduction, [(step title, step markdown)]) split on level-2 headings, or on numbered
    level-3 headings ("### 1. Install") when the page has no level-2 headings."""
    lines = text.split("\n")
    parsed = tokens(text)
    headings = [
        (int(t.tag[1]), t.map[0], parsed[i + 1].content.strip())
        for i, t in enumerate(parsed)
        if t.type == "heading_open" and t.map
    ]
    title = next((name for level, _, name in headings if level == 1), "")
    # Sections are the level-2 headings, and any level-1 heading after the title (a README's "# Development").
    first_title = next((line for level, line, _ in headings if level == 1), None)
    cuts = [(line, name) for level, line, name in headings if level == 2 or (level == 1 and line != first_title)]
    if not cuts:
        cuts = [(line, name) for level, line, name in headings if level == 3 and STEP_HEADING.match(name)]
    if not cuts:
        return title, "", [(title or "Follow the page", text.strip())]
    intro_start = next((line + 1 for level, line, _ in headings if level == 1), 0)
    introduction = "\n".join(lines[intro_start : cuts[0][0]]).strip()
    steps = []
    for index, (start, name) in enumerate(cuts):
        end = cuts[index + 1][0] if index + 1 < len(cuts) else len(lines)
        steps.append((STEP_HEADING.sub("", name) or name, "\n".join(lines[start:end]).strip()))
    return title, introduction, steps


def operations_for(markdown: str) -> str:
    """What to do in a step, as a numbered list in the prose style of the existing exports."""
    items, paragraph, in_heading = [], "", False
    for token in tokens(markdown):
        if token.type in ("heading_open", "heading_close"):
            in_heading = token.type == "heading_open"
            continue
        if token.type == "inline" and in_heading:
            continue
        if token.type == "inline":
            paragraph = token.content
            for sentence in _sentences(token.content):
                if IMPERATIVE.match(sentence) and not sentence.endswith(":"):
                    items.append(sentence.rstrip("."))
            continue
        if token.type != "fence":
            continue
        language = info_language(token.info)
        intro = FILE_INTRO.search(paragraph.strip().split(". ")[-1]) if paragraph else None
        if intro and is_file_path(intro.group(2)) and not re.match(r"^\s*(?:\$|%|>>>)\s", token.content):
            items.append(f"Create {intro.group(2)} with the code shown")
        elif language in SHELL_LANGUAGES or (not language and token.content.lstrip().startswith("$ ")):
            commands, _ = split_shell_lines(token.content, console=language == "console")
            items += [f"Run: {command}" for command in commands]
        elif language in PYTHON_LANGUAGES:
            items.append("Run the Python code shown")
        elif language and language not in OUTPUT_LANGUAGES:
            items.append(f"Use the {language} code shown")
        paragraph = ""
    indicators = [s.rstrip(".") for s in _sentences(markdown) if SUCCESS.search(s)]
    if indicators:
        items.append("Success indicators: " + "; ".join(indicators))
    return "\n".join(f"{number}. {item}" for number, item in enumerate(items, start=1)) or "1. Read the explanation"


MYST_TARGET = re.compile(r"^\([\w.:-]+\)=[ \t]*\n", re.MULTILINE)  # `(install)=`: an anchor, not text
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*<?(\S+?)>?(?:\s+[\"'(].*[\"')])?\s*$", re.MULTILINE)
REFERENCE_USE = re.compile(r"(!?)\[([^\]]+)\](?:\[([^\]]*)\])?(?!\(|:)")
MYST_ADMONITION = re.compile(
    r"^(?P<fence>:{3,}|`{3,})\{(?P<kind>note|tip|hint|important|warning|caution|attention|danger|error|seealso|"
    r"admonition)\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$",
    re.MULTILINE | re.DOTALL,
)
MKDOCS_ADMONITION = re.compile(r"^(?:!!!|\?\?\?\+?)\s+(\w+)(?:\s+\"([^\"]*)\")?\s*\n((?:(?: {4}.*)?\n)*)", re.MULTILINE)


def reader_text(doc_path: Path, docs_root: Path | None = None) -> str:
    """The page as its reader sees it: includes resolved from the docs folder, front matter dropped,
    reference-style links written out where they are used (a step carries its own links), admonitions
    as quoted notes (text to read, never code to run)."""
    text = expand(doc_path, docs_root or doc_path.parent).text
    text = FRONT_MATTER.sub("", text, count=1)
    text = MYST_TARGET.sub("", text)
    text = _admonitions_as_notes(text)
    return _inline_references(text)


def _admonitions_as_notes(text: str) -> str:
    def quoted(kind: str, title: str, body: str) -> str:
        label = (title or kind).strip().capitalize()
        lines = [f"> **{label}:**"] + [f"> {line}".rstrip() for line in body.strip("\n").split("\n")]
        return "\n".join(lines) + "\n"

    text = MYST_ADMONITION.sub(lambda m: quoted(m.group("kind"), "", m.group("body")), text)
    return MKDOCS_ADMONITION.sub(
        lambda m: quoted(m.group(1), m.group(2) or "", re.sub(r"^ {4}", "", m.group(3), flags=re.MULTILINE)), text
    )


def _inline_references(text: str) -> str:
    definitions = {label.lower(): url for label, url in REFERENCE_DEFINITION.findall(text)}
    if not definitions:
        return text
    text = REFERENCE_DEFINITION.sub("", text)
    outside_code = re.split(r"(^(?:`{3,}|~{3,}).*?^(?:`{3,}|~{3,})\s*$)", text, flags=re.MULTILINE | re.DOTALL)

    def link(match: re.Match) -> str:
        bang, label, reference = match.groups()
        url = definitions.get((reference or label).lower())
        return f"{bang}[{label}]({url})" if url else match.group(0)

    return (
        "".join(
            part if index % 2 else REFERENCE_USE.sub(link, part) for index, part in enumerate(outside_code)
        ).rstrip()
        + "\n"
    )


def generate_walkthrough(
    doc_path: Path,
    library: str,
    version: str = "",
    original_path: str | None = None,
    docs_root: Path | None = None,
) -> tuple[str, dict]:
    """(walkthrough id, export) for a tutorial page; the export validates against WalkthroughExport. Included
    files are looked up beside the page and from docs_root (default: the page's folder)."""
    text = reader_text(Path(doc_path), docs_root)
    title, introduction, sections = _sections(text)
    # A project's notes for its own contributors (how to develop it, its license) are not the reader's path.
    sections = [(name, markdown) for name, markdown in sections if not CONTRIBUTOR_SECTION.fullmatch(name.strip())]
    context = f"{library} {version}".strip()
    prerequisites = " ".join(
        s for s in _sentences(introduction) if re.search(r"\b(need|require|install|prerequisite)", s, re.I)
    )
    steps = []
    for position, (name, markdown) in enumerate(sections):
        sentences = _sentences(markdown)
        steps.append(
            {
                "title": name,
                "displayOrder": position,
                "createdAt": 0,
                "updatedAt": 0,
                "metadata": None,
                "nextStepReference": position + 1 if position + 1 < len(sections) else None,
                "contentFields": {
                    "version": "v1",
                    "contentForUser": markdown,
                    "contextForAgent": f"Library: {context or 'unspecified'}."
                    + (f" Prerequisites: {prerequisites}" if prerequisites else ""),
                    "operationsForAgent": operations_for(markdown),
                    "introductionForAgent": f"This step: {name}." + (f" {sentences[0]}" if sentences else ""),
                },
            }
        )
    digest = hashlib.sha256(text.encode()).hexdigest()
    walkthrough_id = f"wt_{digest[:8]}"
    description = _sentences(introduction)[0] if _sentences(introduction) else ""
    export = {
        "version": "1.0",
        "exportedAt": None,
        "walkthrough": {
            "title": title or Path(doc_path).stem.replace("-", " ").title(),
            "description": description,
            "type": "tutorial",
            "status": "generated",
            "createdAt": 0,
            "updatedAt": 0,
            "estimatedDurationMinutes": max(1, 2 * len(steps)),
            "tags": [library] if library else [],
            "metadata": None,
        },
        "steps": steps,
        "metadata": {
            "originalDocPath": original_path or str(doc_path),
            "generatedBy": "stackbench-rules",
            "library": library,
            "libraryVersion": version,
            "contentHash": digest,
        },
    }
    WalkthroughExport.model_validate(export)
    return walkthrough_id, export
