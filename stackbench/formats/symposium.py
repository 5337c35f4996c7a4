"""The Symposium code-walkthrough format, in both of its forms.

JSON form: up to four sections (introduction, highlights, changes, actions), each a List: a markdown string or
a list of elements; an element is markdown text or an object holding one of action, gitdiff, comment, mermaid.
Both spellings found in the wild are accepted: gitdiff.range / commit_range, action.content / description,
search.path / file.

Markdown form (the later one): a markdown document whose elements are fenced blocks (```mermaid, ```comment,
```gitdiff, ```action); a block's first lines are `key: value` headers up to a blank line and the rest is its
body. Locations there are expressions: findDefinition(`Name`), findReferences(`Name`),
search(`path`, `regex`[, `.ext`]), lines(`path`, start[, end])."""

import re
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    model_validator,
)

from stackbench.lib.jsonfiles import FormatError, parse_json_text, parse_model
from stackbench.lib.markdown import fenced_blocks

SECTIONS = ("introduction", "highlights", "changes", "actions")
ELEMENT_KINDS = ("action", "gitdiff", "comment", "mermaid")
MAX_SOURCE_CHARS = 2_000_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SearchSpec(_Strict):
    path: str = Field(min_length=1, validation_alias=AliasChoices("path", "file"))
    regex: str = Field(min_length=1)
    extension: str | None = None


class RangeSpec(_Strict):
    path: str = Field(min_length=1, validation_alias=AliasChoices("path", "file"))
    line: int = Field(ge=1)
    column: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)


class Location(_Strict):
    search: SearchSpec | None = None
    range: RangeSpec | None = None
    findDefinitions: str | None = Field(
        default=None, min_length=1, validation_alias=AliasChoices("findDefinitions", "findDefinition")
    )
    findReferences: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        given = [name for name in ("search", "range", "findDefinitions", "findReferences") if getattr(self, name)]
        if len(given) != 1:
            raise ValueError("a location is exactly one of: search, range, findDefinitions, findReferences")
        return self

    def describe(self) -> str:
        if self.search:
            return f"{self.search.path}?{self.search.regex}"
        if self.range:
            return self.range.path
        name = self.findDefinitions or self.findReferences
        assert name is not None, "_exactly_one leaves one of the four set"
        return name


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _element_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "markdown"
    if isinstance(value, dict):
        keys = [key for key in value if key in ELEMENT_KINDS]
        # "kind" is what our own stored copies carry beside the element's key.
        if len(keys) == 1 and set(value) - {"kind"} == {keys[0]}:
            return keys[0]
    if isinstance(value, BaseModel):
        return getattr(value, "kind", None)
    return None


class ActionBody(_Strict):
    content: "MarkdownList" = Field(default_factory=list, validation_alias=AliasChoices("content", "description"))
    button: str = Field(min_length=1)
    tell_agent: str | None = None

    def message(self) -> str:
        """What the button sends: tell_agent with newlines replaced by spaces, so nothing submits by itself."""
        text = self.tell_agent if self.tell_agent is not None else self.button
        return re.sub(r"\s*[\r\n]+\s*", " ", text).strip()


class Exclude(_Strict):
    unstaged: bool = False
    staged: bool = False


class GitDiffBody(_Strict):
    range: str = Field(min_length=1, validation_alias=AliasChoices("range", "commit_range"))
    exclude: Exclude = Field(default_factory=Exclude)


class CommentBody(_Strict):
    location: Location
    icon: str | None = None
    content: "MarkdownList" = Field(default_factory=list)


class ActionElement(_Strict):
    kind: Literal["action"] = "action"
    action: ActionBody


class GitDiffElement(_Strict):
    kind: Literal["gitdiff"] = "gitdiff"
    gitdiff: GitDiffBody


class CommentElement(_Strict):
    kind: Literal["comment"] = "comment"
    comment: CommentBody


class MermaidElement(_Strict):
    kind: Literal["mermaid"] = "mermaid"
    mermaid: str


Element = Annotated[
    Annotated[str, Tag("markdown")]
    | Annotated[ActionElement, Tag("action")]
    | Annotated[GitDiffElement, Tag("gitdiff")]
    | Annotated[CommentElement, Tag("comment")]
    | Annotated[MermaidElement, Tag("mermaid")],
    Discriminator(
        _element_kind,
        custom_error_type="unknown_element",
        custom_error_message="expected markdown text or an object with exactly one of: " + ", ".join(ELEMENT_KINDS),
    ),
]
MarkdownList = Annotated[list[Element], BeforeValidator(_as_list)]
ActionBody.model_rebuild()
CommentBody.model_rebuild()


class SymposiumWalkthrough(BaseModel):
    model_config = ConfigDict(extra="forbid")

    introduction: MarkdownList = Field(default_factory=list)
    highlights: MarkdownList = Field(default_factory=list)
    changes: MarkdownList = Field(default_factory=list)
    actions: MarkdownList = Field(default_factory=list)

    def title(self) -> str:
        for element in self.introduction:
            if isinstance(element, str) and element.strip():
                heading = re.search(r"^#+\s+(.+)$", element, re.MULTILINE)
                first = heading.group(1) if heading else element.strip().splitlines()[0]
                return re.sub(r"[*_`]", "", first).strip()[:200] or "Code walkthrough"
        return "Code walkthrough"


def parse_walkthrough(source: str | dict[str, Any], name: str = "walkthrough") -> tuple[SymposiumWalkthrough, str]:
    """A walkthrough from its JSON (text or object) or its markdown form. Returns it with the form's name."""
    if isinstance(source, str):
        if len(source) > MAX_SOURCE_CHARS:
            raise FormatError(f"{name}: {len(source)} characters is over the {MAX_SOURCE_CHARS} limit")
        stripped = source.lstrip()
        if stripped.startswith(("{", "[")):
            return _validate(parse_json_text(source, name), name), "json"
        return parse_markdown_form(source, name), "markdown"
    return _validate(source, name), "json"


def _validate(data: Any, name: str) -> SymposiumWalkthrough:
    if not isinstance(data, dict):
        raise FormatError(f"{name}: a walkthrough is a JSON object with introduction, highlights, changes, actions")
    return parse_model(SymposiumWalkthrough, data, name)


ARGUMENT = r"""(?:`([^`]*)`|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|(-?\d+))"""


def _arguments(text: str) -> list[str]:
    values = []
    for match in re.finditer(ARGUMENT, text):
        value = next(group for group in match.groups() if group is not None)
        values.append(value.replace('\\"', '"') if match.group(2) is not None else value)
    return values


def parse_location_expression(expression: str) -> dict[str, Any]:
    """findDefinition(`X`), findReferences(`X`), search(`path`, `regex`[, `.ext`]), lines(`path`, a[, b])."""
    match = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", expression, re.DOTALL)
    if not match:
        raise ValueError(
            f"cannot read location {expression!r}; expected findDefinitions(`Name`), "
            "findReferences(`Name`), search(`path`, `regex`) or lines(`path`, start, end)"
        )
    function, args = match.group(1), _arguments(match.group(2))
    if function in ("findDefinition", "findDefinitions") and len(args) == 1:
        return {"findDefinitions": args[0]}
    if function in ("findReference", "findReferences") and len(args) == 1:
        return {"findReferences": args[0]}
    if function == "search" and len(args) in (2, 3):
        return {"search": {"path": args[0], "regex": args[1], **({"extension": args[2]} if len(args) == 3 else {})}}
    if function == "lines" and len(args) in (2, 3) and all(a.lstrip("-").isdigit() for a in args[1:]):
        return {
            "range": {"path": args[0], "line": int(args[1]), **({"end_line": int(args[2])} if len(args) == 3 else {})}
        }
    raise ValueError(f"cannot read location {expression!r}: unknown function or wrong arguments")


def _headers_and_body(content: str, info_args: str) -> tuple[dict[str, str], str]:
    headers = {
        key.replace("-", "_"): value
        for key, value in (part.split("=", 1) for part in re.findall(r'[\w-]+=(?:"[^"]*"|`[^`]*`|[^,\s)]+)', info_args))
    }
    headers = {key: value.strip('"`') for key, value in headers.items()}
    lines = content.split("\n")
    index = 0
    while index < len(lines) and re.match(r"^[\w-]+\s*:", lines[index]):
        key, value = lines[index].split(":", 1)
        headers[key.strip().replace("-", "_")] = value.strip()
        index += 1
    if index < len(lines) and lines[index].strip() == "":
        index += 1
    return headers, "\n".join(lines[index:]).strip("\n")


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("true", "yes", "1", "on", "")


def _element_from_block(kind: str, headers: dict[str, str], body: str, where: str) -> dict[str, Any]:
    if kind == "mermaid":
        return {"mermaid": body}
    if kind == "comment":
        if "location" not in headers:
            raise FormatError(f"{where}: a comment block needs a `location:` header")
        try:
            location = parse_location_expression(headers["location"])
        except ValueError as exc:
            raise FormatError(f"{where}: {exc}") from None
        comment: dict[str, Any] = {"location": location, "content": body}
        if headers.get("icon"):
            comment["icon"] = headers["icon"]
        return {"comment": comment}
    if kind == "gitdiff":
        if "range" not in headers:
            raise FormatError(f"{where}: a gitdiff block needs a `range:` header")
        exclude = {
            "unstaged": "exclude_unstaged" in headers and _truthy(headers["exclude_unstaged"]),
            "staged": "exclude_staged" in headers and _truthy(headers["exclude_staged"]),
        }
        return {"gitdiff": {"range": headers["range"], "exclude": exclude}}
    if "button" not in headers:
        raise FormatError(f"{where}: an action block needs a `button:` header")
    return {"action": {"button": headers["button"], "content": body, "tell_agent": body or headers["button"]}}


def parse_markdown_form(text: str, name: str = "walkthrough") -> SymposiumWalkthrough:
    """The markdown form, read into the same model: its whole document becomes the introduction."""
    lines = text.split("\n")
    elements: list[str | dict[str, Any]] = []
    chunk_start = 0
    for block in fenced_blocks(text):
        kind_match = re.match(r"^(mermaid|comment|gitdiff|action)\b\s*(?:\((.*)\))?", block.info)
        if not kind_match:
            continue
        before = "\n".join(lines[chunk_start : block.start]).strip("\n")
        if before.strip():
            elements.append(before)
        headers, body = _headers_and_body(block.content, kind_match.group(2) or "")
        elements.append(_element_from_block(kind_match.group(1), headers, body, f"{name}, line {block.start + 1}"))
        chunk_start = block.end
    rest = "\n".join(lines[chunk_start:]).strip("\n")
    if rest.strip():
        elements.append(rest)
    return _validate({"introduction": elements}, name)


def iter_comments(walkthrough: SymposiumWalkthrough) -> Iterator[tuple[str, CommentBody]]:
    """Every comment with its key (section.index, nested through content lists)."""

    def walk(items: Sequence[Element], prefix: str) -> Iterator[tuple[str, CommentBody]]:
        for index, element in enumerate(items):
            key = f"{prefix}.{index}"
            if isinstance(element, CommentElement):
                yield key, element.comment
                yield from walk(element.comment.content, f"{key}.content")
            elif isinstance(element, ActionElement):
                yield from walk(element.action.content, f"{key}.content")

    for section in SECTIONS:
        yield from walk(getattr(walkthrough, section), section)


def iter_gitdiffs(walkthrough: SymposiumWalkthrough) -> Iterator[tuple[str, GitDiffBody]]:
    for section in SECTIONS:
        for index, element in enumerate(getattr(walkthrough, section)):
            if isinstance(element, GitDiffElement):
                yield f"{section}.{index}", element.gitdiff


DEFAULT_ACTIONS = [
    {
        "action": {
            "description": "If you are satisfied with these changes, checkpoint them to update tracking documents.",
            "button": "Checkpoint",
            "tell_agent": "Checkpoint",
        }
    },
    {
        "action": {
            "description": "Request the agent to make more changes.",
            "button": "Request changes",
            "tell_agent": "I'd like to make more changes. Please discuss with them with me.",
        }
    },
]


def actions_or_default(walkthrough: SymposiumWalkthrough) -> list[Element]:
    """The walkthrough's actions, or Symposium's defaults when it gives none anywhere."""
    has_actions = any(isinstance(e, ActionElement) for section in SECTIONS for e in getattr(walkthrough, section))
    if has_actions:
        return walkthrough.actions
    return SymposiumWalkthrough.model_validate({"actions": DEFAULT_ACTIONS}).actions
