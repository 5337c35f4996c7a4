import subprocess

import pytest

from stackbench.formats.symposium import GitDiffBody
from stackbench.lib.git import GitError
from stackbench.symposium.gitdiff import check_range, diff_tree, file_diff


def tree(repo, **spec):
    return [
        (
            n.key if n.key in ("all", "staged", "unstaged") else "commit",
            n.label.split(" ", 1)[-1] if n.sha else n.label,
            [(f.path, f.adds, f.dels) for f in n.files],
        )
        for n in diff_tree(repo, GitDiffBody.model_validate(spec))
    ]


def test_a_range_of_two_commits_gives_all_commits_then_each_commit_then_the_work_in_progress(symposium_repo):
    assert tree(symposium_repo, range="HEAD~2..HEAD") == [
        ("all", "All 2 commits", [("docs/auth.md", 4, 1), ("src/auth.py", 9, 2), ("src/test_auth.py", 5, 0)]),
        ("commit", "Compare tokens in constant time; add logout", [("src/auth.py", 9, 2)]),
        ("commit", "Document logout and tokens; add a test", [("docs/auth.md", 4, 1), ("src/test_auth.py", 5, 0)]),
        ("staged", "Staged changes", [("docs/auth.md", 3, 0)]),
        ("unstaged", "Unstaged changes", [("src/auth.py", 4, 0)]),
    ]


def test_one_commit_has_no_all_commits_node_and_exclusions_are_honoured(symposium_repo):
    assert [node for node, _, _ in tree(symposium_repo, range="HEAD", exclude={"unstaged": True})] == [
        "commit",
        "staged",
    ]
    assert [node for node, _, _ in tree(symposium_repo, range="HEAD", exclude={"unstaged": True, "staged": True})] == [
        "commit"
    ]


def test_a_range_that_ends_before_head_shows_no_work_in_progress(symposium_repo):
    assert [node for node, _, _ in tree(symposium_repo, range="HEAD~2..HEAD~1")] == ["commit"]


def test_commit_range_spelling_and_open_ended_ranges(symposium_repo):
    assert [node for node, _, _ in tree(symposium_repo, commit_range="HEAD^..")][:1] == ["commit"]


def test_the_root_commit_diffs_against_the_empty_tree(symposium_repo):
    root = subprocess.run(
        ["git", "-C", str(symposium_repo), "rev-list", "--max-parents=0", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert tree(symposium_repo, range=root)[0][2] == [("docs/auth.md", 3, 0), ("src/auth.py", 6, 0)]


def test_a_file_diff_has_line_numbers_and_kinds(symposium_repo):
    spec = GitDiffBody.model_validate({"range": "HEAD~2..HEAD"})
    node = diff_tree(symposium_repo, spec)[1]
    rows = file_diff(symposium_repo, spec, node.key, "src/auth.py")
    assert rows[0].kind == "hunk"
    assert ("del", 1, None, "def validate_token(token):") in [(r.kind, r.old, r.new, r.text) for r in rows]
    assert ("add", None, 1, "import hmac") in [(r.kind, r.old, r.new, r.text) for r in rows]
    unstaged = file_diff(symposium_repo, spec, "unstaged", "src/auth.py")
    assert [r.text for r in unstaged if r.kind == "add"][-1] == '    return validate_token("s")'


def test_only_files_of_the_tree_can_be_asked_for(symposium_repo):
    spec = GitDiffBody.model_validate({"range": "HEAD~1..HEAD"})
    with pytest.raises(GitError, match="not part of this diff"):
        file_diff(symposium_repo, spec, "all", "src/auth.py")
    with pytest.raises(GitError, match="not part of this diff"):
        file_diff(symposium_repo, spec, "staged", "../../etc/passwd")


@pytest.mark.parametrize("bad", ["--output=/tmp/x", "-p", "HEAD; rm -rf /", "HEAD..HEAD --", "$(id)", "..", "a b"])
def test_option_looking_or_shell_ranges_are_refused(bad):
    with pytest.raises(GitError, match="is not a revision range"):
        check_range(bad)


def test_an_unknown_revision_is_a_clear_error(symposium_repo):
    with pytest.raises(GitError):
        diff_tree(symposium_repo, GitDiffBody.model_validate({"range": "nope~3..nope"}))
