"""Where a Symposium comment points, in a real repository: regex search in a file or folder, a line range, or
the definitions and references of a name (Python's ast for .py files, a word-boundary search elsewhere).

Every path stays inside the repository: absolute paths, `..` and symlinks that lead out are refused."""

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

from stackbench.formats.symposium import Location
from stackbench.lib.git import GitError, git

MAX_FILE_BYTES = 1_000_000
MAX_MATCHES = 200
EXCERPT_RADIUS = 3
DEFINITION_KEYWORDS = r"(?:def|class|function|fn|struct|enum|trait|interface|type|const|let|var|func|module)"


class LocationError(ValueError):
    """A location that cannot be looked up (bad path, bad regex); the message says which."""


@dataclass(frozen=True)
class Match:
    path: str
    line: int
    column: int = 1
    text: str = ""
    end_line: int | None = None

    def label(self) -> str:
        return f"{self.path}:{self.line}"


def safe_path(repo: Path, relative: str) -> Path:
    """The path inside the repository, or LocationError when it would leave it."""
    if not relative or os.path.isabs(relative) or relative.startswith("~"):
        raise LocationError(f"{relative!r} must be a path relative to the repository")
    root = Path(os.path.realpath(repo))
    target = Path(os.path.realpath(root / relative))
    if not target.is_relative_to(root):
        raise LocationError(f"{relative!r} lies outside the repository")
    return target


def repository_files(repo: Path) -> list[str]:
    """The files git tracks: what a comment may show. Untracked and ignored files (a checkout's local secrets,
    build output) are never read, and a folder that is not a repository shows nothing."""
    try:
        listed = git(repo, "ls-files", "-z", "--cached")
    except GitError:
        return []
    return sorted({name for name in listed.split("\0") if name})


def tracked(repo: Path, target: Path) -> bool:
    relative = os.path.relpath(target, os.path.realpath(repo))
    try:
        return bool(git(repo, "ls-files", "-z", "--cached", "--", relative).strip("\0"))
    except GitError:
        return False


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8000]:
        return None
    return data.decode("utf-8", "replace")


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _search_text(relative: str, text: str, pattern: re.Pattern) -> list[Match]:
    matches, lines = [], _lines(text)
    for found in pattern.finditer(text):
        line = _line_of(text, found.start())
        column = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1
        matches.append(Match(relative, line, column, lines[line - 1].strip()))
        if len(matches) >= MAX_MATCHES:
            break
    unique: dict[int, Match] = {}
    for match in matches:
        unique.setdefault(match.line, match)
    return list(unique.values())


def _files_under(repo: Path, relative: str, extension: str | None) -> list[str]:
    prefix = relative.rstrip("/") + "/" if relative not in ("", ".") else ""
    files = [name for name in repository_files(repo) if name.startswith(prefix)]
    if extension:
        files = [name for name in files if name.endswith(extension if extension.startswith(".") else f".{extension}")]
    return files


def _python_definitions(relative: str, text: str, name: str) -> list[Match] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines, found = _lines(text), []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            found.append(Match(relative, node.lineno, node.col_offset + 1, lines[node.lineno - 1].strip()))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                found.append(Match(relative, node.lineno, node.col_offset + 1, lines[node.lineno - 1].strip()))
    return found


def _python_references(relative: str, text: str, name: str) -> list[Match] | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines, found = _lines(text), {}
    for node in ast.walk(tree):
        line = None
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            line, column = node.lineno, node.col_offset
        elif isinstance(node, ast.Attribute) and node.attr == name and node.end_col_offset is not None:
            line, column = node.lineno, node.end_col_offset - len(name)
        elif isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names):
            line, column = node.lineno, node.col_offset
        if line is not None and line not in found:
            found[line] = Match(relative, line, column + 1, lines[line - 1].strip())
    return sorted(found.values(), key=lambda m: m.line)


def _by_name(repo: Path, name: str, definitions: bool) -> list[Match]:
    if not re.fullmatch(r"[\w.$]+", name):
        raise LocationError(f"{name!r} is not a symbol name")
    plain = re.compile((DEFINITION_KEYWORDS + r"\s+" if definitions else "") + r"\b" + re.escape(name) + r"\b")
    matches: list[Match] = []
    for relative in repository_files(repo):
        path = Path(repo) / relative
        text = _read(path)
        if text is None or name not in text:
            continue
        found = None
        if relative.endswith(".py"):
            found = (_python_definitions if definitions else _python_references)(relative, text, name)
        if found is None:
            found = _search_text(relative, text, plain)
        matches.extend(found)
        if len(matches) >= MAX_MATCHES:
            break
    return matches[:MAX_MATCHES]


def resolve(location: Location, repo: Path) -> list[Match]:
    """Every place the location points at, in file and line order."""
    repo = Path(repo)
    if location.search:
        spec = location.search
        try:
            pattern = re.compile(spec.regex, re.MULTILINE)
        except re.error as exc:
            raise LocationError(f"the regex {spec.regex!r} is not valid: {exc}") from None
        target = safe_path(repo, spec.path)
        if target.is_dir():
            names = _files_under(repo, os.path.relpath(target, os.path.realpath(repo)), spec.extension)
        elif target.is_file() and tracked(repo, target):
            names = [os.path.relpath(target, os.path.realpath(repo))]
        else:
            return []
        matches = []
        for name in names:
            text = _read(Path(os.path.realpath(repo)) / name)
            if text is not None:
                matches.extend(_search_text(name, text, pattern))
        return matches[:MAX_MATCHES]
    if location.range:
        span = location.range
        target = safe_path(repo, span.path)
        text = _read(target) if target.is_file() and tracked(repo, target) else None
        if text is None:
            return []
        lines = _lines(text)
        if span.line > len(lines):
            return []
        return [Match(span.path, span.line, span.column or 1, lines[span.line - 1].strip(), span.end_line)]
    if location.findDefinitions:
        return _by_name(repo, location.findDefinitions, definitions=True)
    assert location.findReferences is not None  # a Location holds exactly one of its four kinds
    return _by_name(repo, location.findReferences, definitions=False)


def excerpt(repo: Path, match: Match, radius: int = EXCERPT_RADIUS) -> list[tuple[int, str, bool]]:
    """(line number, text, is the match) around a match, for a card."""
    target = safe_path(Path(repo), match.path)
    text = _read(target) if tracked(Path(repo), target) else None
    if text is None:
        return []
    lines = _lines(text)
    last = match.end_line or match.line
    start, stop = max(1, match.line - radius), min(len(lines), last + radius)
    return [(number, lines[number - 1], match.line <= number <= last) for number in range(start, stop + 1)]
