"""Git diffs of a Symposium gitdiff element, as a tree: "all commits" (when the range holds more than one),
then one node per commit, each with its files and +/- counts; staged and unstaged changes as their own nodes
when the range includes HEAD (unless excluded). Uses git itself, with a timeout on every call; a range that is
not a plain revision range (an option such as --output=x, spaces, shell characters) is refused."""

import re
from dataclasses import dataclass, field
from pathlib import Path

from stackbench.formats.symposium import GitDiffBody
from stackbench.lib.git import GitError, git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_DIFF_BYTES = 2_000_000
REVISION = r"[A-Za-z0-9_./~^@{}:+-]*"
RANGE = re.compile(rf"^(?!-){REVISION}(?:\.\.\.?{REVISION})?$")


def check_range(revision_range: str) -> str:
    text = revision_range.strip()
    if not text or not RANGE.match(text) or text in ("..", "..."):
        raise GitError(f"{revision_range!r} is not a revision range (expected e.g. HEAD~2..HEAD or a commit)")
    return text


@dataclass
class FileChange:
    path: str
    adds: int | None
    dels: int | None
    old_path: str | None = None
    discussed: bool = False

    @property
    def binary(self) -> bool:
        return self.adds is None


@dataclass
class DiffNode:
    key: str  # "all", a full sha, "staged" or "unstaged"
    label: str
    files: list[FileChange] = field(default_factory=list)
    sha: str = ""
    subject: str = ""

    @property
    def adds(self) -> int:
        return sum(f.adds or 0 for f in self.files)

    @property
    def dels(self) -> int:
        return sum(f.dels or 0 for f in self.files)


def _numstat(output: str) -> list[FileChange]:
    """Parse `--numstat -z`: renames come as an empty path followed by the old and new paths."""
    parts = output.split("\0")
    changes, index = [], 0
    while index < len(parts):
        entry = parts[index]
        index += 1
        if not entry.strip():
            continue
        adds, dels, path = entry.split("\t", 2)
        old = None
        if path == "":
            old, path = parts[index], parts[index + 1]
            index += 2
        changes.append(
            FileChange(path.strip("\n"), None if adds == "-" else int(adds), None if dels == "-" else int(dels), old)
        )
    return changes


def commits_in(repo: Path, revision_range: str) -> list[tuple[str, str, str]]:
    """(sha, short sha, subject) of every commit in the range, oldest first."""
    text = check_range(revision_range)
    if ".." in text:
        shas = git(repo, "rev-list", "--reverse", "--end-of-options", text, "--").split()
    else:
        shas = [git(repo, "rev-parse", "--verify", "--end-of-options", f"{text}^{{commit}}").strip()]
    if not shas:
        return []
    log = git(repo, "log", "--no-walk=unsorted", "--format=%H%x00%h%x00%s", *shas, "--")
    rows = [line.split("\0", 2) for line in log.splitlines() if line]
    return [(sha, short, subject) for sha, short, subject in rows]


def _parent(repo: Path, sha: str) -> str:
    try:
        return git(repo, "rev-parse", "--verify", "--end-of-options", f"{sha}^").strip()
    except GitError:
        return EMPTY_TREE


def _spans(repo: Path, node: DiffNode, commits: list[tuple[str, str, str]]) -> list[str]:
    """The arguments of `git diff` that give this node's changes."""
    if node.key == "staged":
        return ["--cached"]
    if node.key == "unstaged":
        return []
    if node.key == "all":
        return [_parent(repo, commits[0][0]), commits[-1][0]]
    return [_parent(repo, node.sha), node.sha]


def diff_tree(repo: Path, spec: GitDiffBody) -> list[DiffNode]:
    repo = Path(repo)
    commits = commits_in(repo, spec.range)
    nodes = []
    if len(commits) > 1:
        nodes.append(DiffNode("all", f"All {len(commits)} commits"))
    nodes += [DiffNode(sha, f"{short} {subject}", sha=sha, subject=subject) for sha, short, subject in commits]
    head = git(repo, "rev-parse", "HEAD").strip()
    if commits and commits[-1][0] == head:
        if not spec.exclude.staged:
            nodes.append(DiffNode("staged", "Staged changes"))
        if not spec.exclude.unstaged:
            nodes.append(DiffNode("unstaged", "Unstaged changes"))
    for node in nodes:
        node.files = _numstat(git(repo, "diff", "--numstat", "-z", "-M", *_spans(repo, node, commits), "--"))
    return [node for node in nodes if node.files or node.key not in ("staged", "unstaged")]


@dataclass
class DiffRow:
    kind: str  # hunk, add, del, context, note
    old: int | None
    new: int | None
    text: str


def file_diff(repo: Path, spec: GitDiffBody, key: str, path: str) -> list[DiffRow]:
    """The unified diff of one file of one node, with old and new line numbers. The node and the file must be
    in the element's own tree, so a request can only ask for what the walkthrough shows."""
    repo = Path(repo)
    commits = commits_in(repo, spec.range)
    node = next((n for n in diff_tree(repo, spec) if n.key == key), None)
    if node is None or not any(f.path == path for f in node.files):
        raise GitError(f"{path} is not part of this diff")
    output = git(repo, "diff", "-M", *_spans(repo, node, commits), "--", path)
    return parse_unified(output[:MAX_DIFF_BYTES])


def parse_unified(text: str) -> list[DiffRow]:
    rows, old, new, started = [], 0, 0, False
    for line in text.splitlines():
        hunk = re.match(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$", line)
        if hunk:
            old, new, started = int(hunk.group(1)), int(hunk.group(2)), True
            rows.append(DiffRow("hunk", None, None, line))
        elif not started:
            if line.startswith("Binary files"):
                rows.append(DiffRow("note", None, None, "Binary file changed"))
        elif line.startswith("+"):
            rows.append(DiffRow("add", None, new, line[1:]))
            new += 1
        elif line.startswith("-"):
            rows.append(DiffRow("del", old, None, line[1:]))
            old += 1
        elif line.startswith("\\"):
            rows.append(DiffRow("note", None, None, line))
        else:
            rows.append(DiffRow("context", old, new, line[1:] if line.startswith(" ") else line))
            old += 1
            new += 1
    return rows
