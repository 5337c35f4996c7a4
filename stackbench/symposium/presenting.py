"""A Symposium walkthrough made ready to show: comments resolved against the repository (placed, ambiguous
with a picker, or not found), gitdiff elements turned into trees with the discussed files marked, actions
with the message they send. Plain Python: the view renders what this returns."""

import re
from dataclasses import dataclass, field
from pathlib import Path

from stackbench.formats.symposium import (
    SECTIONS,
    ActionElement,
    CommentBody,
    CommentElement,
    Element,
    GitDiffElement,
    MermaidElement,
    SymposiumWalkthrough,
    actions_or_default,
)
from stackbench.lib.git import GitError
from stackbench.symposium.gitdiff import DiffNode, diff_tree
from stackbench.symposium.locations import LocationError, Match, excerpt, resolve

# Codicon names as symbols the default fonts of a plain Linux desktop have (DejaVu), so they always show.
CODICONS = {
    "question": "?",
    "lightbulb": "☼",
    "light-bulb": "☼",
    "warning": "⚠",
    "alert": "⚠",
    "info": "ℹ",
    "error": "✖",
    "bug": "✖",
    "check": "✔",
    "pass": "✔",
    "comment": "✎",
    "comment-discussion": "✎",
    "note": "✎",
    "edit": "✎",
    "eye": "◉",
    "star": "★",
    "star-full": "★",
    "heart": "♥",
    "flag": "⚑",
    "tools": "⚒",
    "gear": "⚙",
    "settings-gear": "⚙",
    "rocket": "➚",
    "arrow-right": "➜",
    "pin": "⚑",
    "beaker": "⚗",
}


def codicon(icon: str | None) -> tuple[str, str]:
    """A codicon ("$(question)" or "question") as a visible symbol, with its name for screen readers."""
    name = re.sub(r"^\$\((.*)\)$", r"\1", (icon or "comment").strip()) or "comment"
    return CODICONS.get(name, "✎"), name


@dataclass
class CommentView:
    key: str
    comment: CommentBody
    symbol: str
    icon_name: str
    matches: list[Match] = field(default_factory=list)
    chosen: Match | None = None
    error: str = ""
    excerpt: list = field(default_factory=list)

    @property
    def state(self) -> str:
        if self.error:
            return "error"
        if not self.matches:
            return "missing"
        return "placed" if self.chosen else "ambiguous"

    @property
    def location_text(self) -> str:
        return self.comment.location.describe()

    def reply_text(self, message: str) -> str:
        """What a reply sends the agent, as Symposium words it."""
        place = self.chosen or (self.matches[0] if len(self.matches) == 1 else None)
        where = (
            self.location_text
            if self.comment.location.search
            else (
                f"{place.path}?{self.location_text}"
                if place and not self.comment.location.range
                else (place.path if place else self.location_text)
            )
        )
        line = f" (line {place.line})" if place else ""
        return f"<context>In reply to comment on {where}{line}.</context> {message.strip()}".strip()


@dataclass
class GitDiffView:
    key: str
    revision_range: str
    nodes: list[DiffNode] = field(default_factory=list)
    error: str = ""


@dataclass
class Item:
    kind: str  # markdown, mermaid, comment, gitdiff, action
    value: object
    key: str = ""
    children: list["Item"] = field(default_factory=list)


def _comment_view(key: str, comment: CommentBody, repo: Path, chosen: dict) -> CommentView:
    symbol, name = codicon(comment.icon)
    view = CommentView(key, comment, symbol, name)
    try:
        view.matches = resolve(comment.location, repo)
    except LocationError as exc:
        view.error = str(exc)
        return view
    if len(view.matches) == 1:
        view.chosen = view.matches[0]
    elif chosen.get(key):
        view.chosen = next((m for m in view.matches if m.label() == chosen[key]), None)
    if view.chosen:
        view.excerpt = excerpt(repo, view.chosen)
    return view


def present(walkthrough: SymposiumWalkthrough, repo: Path, chosen: dict | None = None) -> dict:
    """Each section's items, ready to render, plus every comment by key (for replies and the diff icons)."""
    chosen = chosen or {}
    comments: dict[str, CommentView] = {}
    diffs: list[GitDiffView] = []

    def items(elements: list[Element], prefix: str) -> list[Item]:
        out: list[Item] = []
        for index, element in enumerate(elements):
            key = f"{prefix}.{index}"
            if isinstance(element, str):
                out.append(Item("markdown", element, key))
            elif isinstance(element, MermaidElement):
                out.append(Item("mermaid", element.mermaid, key))
            elif isinstance(element, CommentElement):
                comment = comments[key] = _comment_view(key, element.comment, repo, chosen)
                out.append(Item("comment", comment, key, items(element.comment.content, f"{key}.content")))
            elif isinstance(element, GitDiffElement):
                diff = GitDiffView(key, element.gitdiff.range)
                try:
                    diff.nodes = diff_tree(repo, element.gitdiff)
                except GitError as exc:
                    diff.error = str(exc)
                diffs.append(diff)
                out.append(Item("gitdiff", diff, key))
            elif isinstance(element, ActionElement):
                out.append(Item("action", element.action, key, items(element.action.content, f"{key}.content")))
        return out

    sections = {name: items(getattr(walkthrough, name), name) for name in SECTIONS if name != "actions"}
    sections["actions"] = items(actions_or_default(walkthrough), "actions")
    discussed = {view.chosen.path for view in comments.values() if view.chosen}
    for view in diffs:
        for node in view.nodes:
            for change in node.files:
                change.discussed = change.path in discussed
    return {"sections": sections, "comments": comments}


def find_element(walkthrough: SymposiumWalkthrough, key: str) -> Element | None:
    """The element at a key such as "highlights.2" or "actions.1.content.0" (None when there is none)."""
    parts = key.split(".")
    if not parts or parts[0] not in SECTIONS:
        return None
    elements = actions_or_default(walkthrough) if parts[0] == "actions" else getattr(walkthrough, parts[0])
    element, rest = None, parts[1:]
    while rest:
        if not rest[0].isdigit() or int(rest[0]) >= len(elements):
            return None
        element, rest = elements[int(rest[0])], rest[1:]
        if rest:
            if rest[0] != "content" or not isinstance(element, (CommentElement, ActionElement)):
                return None
            body = element.comment if isinstance(element, CommentElement) else element.action
            elements, rest = body.content, rest[1:]
    return element
