"""git as the engines run it, against real repositories made in tmp_path."""

import subprocess

import pytest

from stackbench.lib.git import GitError, clone_or_fetch, git, is_remote, is_repository, remote_branches


def commit_file(repo, name, text, message):
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "-c", "user.name=Docs", "-c", "user.email=docs@example.com", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def origin(tmp_path):
    repo = tmp_path / "origin"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_file(repo, "index.md", "# Docs\n", "First page")
    return repo


def test_git_returns_what_it_prints_and_a_failure_carries_gits_last_line(origin):
    assert git(origin, "log", "--format=%s").strip() == "First page"
    with pytest.raises(GitError) as failure:
        git(origin, "show", "no-such-branch")
    said = subprocess.run(["git", "-C", str(origin), "show", "no-such-branch"], capture_output=True, text=True).stderr
    assert len(said.strip().splitlines()) > 1 and str(failure.value) == said.strip().splitlines()[-1]
    with pytest.raises(GitError, match="^fatal: Not a valid object name no-such-object$"):
        git(origin, "cat-file", "-p", "no-such-object")


def test_the_callers_git_configuration_and_environment_change_nothing(origin, tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[alias]\n    log = !echo hijacked\n[core]\n    pager = false\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    assert git(origin, "log", "--format=%s").strip() == "First page"


def test_a_command_that_takes_too_long_is_stopped_with_a_clear_error(origin):
    # A command that surely outlasts its limit (a tiny limit on a fast one raced on a busy machine).
    git(origin, "config", "alias.linger", "!sleep 2")
    with pytest.raises(GitError, match=r"git linger took longer than 0 s"):
        git(origin, "linger", timeout=0.3)


def test_only_a_work_tree_is_a_repository(origin, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert is_repository(origin) and is_repository(origin / ".")
    assert not is_repository(plain) and not is_repository(tmp_path / "missing")
    assert not is_repository(origin / ".git")


@pytest.mark.parametrize(
    "location, remote",
    [
        ("https://github.com/org/docs.git", True),
        ("git://example.org/docs", True),
        ("file:///srv/docs", True),
        ("git@github.com:org/docs.git", True),
        ("/srv/docs", False),
        ("docs/folder", False),
        ("C:/docs", False),
        ("", False),
    ],
)
def test_a_git_url_is_remote_and_a_folder_is_not(location, remote):
    assert is_remote(location) is remote


def test_the_branches_of_a_remote_are_listed(origin):
    git(origin, "branch", "v2")
    assert sorted(remote_branches(f"file://{origin}")) == ["main", "v2"]
    with pytest.raises(GitError):
        remote_branches(f"file://{origin.parent / 'missing'}")


def test_a_transport_that_runs_commands_is_refused(tmp_path):
    witness = tmp_path / "ran"
    with pytest.raises(GitError, match="transport 'ext' not allowed"):
        remote_branches(f"ext::sh -c 'touch {witness}'")
    assert not witness.exists()


def test_a_checkout_is_cloned_then_follows_its_branch_and_loses_local_changes(origin, tmp_path):
    url, checkout = f"file://{origin}", tmp_path / "checkouts" / "library-1"
    first = clone_or_fetch(url, "", checkout)
    assert first == git(origin, "rev-parse", "HEAD").strip() and (checkout / "index.md").read_text() == "# Docs\n"

    second = commit_file(origin, "index.md", "# Docs, revised\n", "Revise")
    (checkout / "index.md").write_text("edited in the checkout")
    assert clone_or_fetch(url, "main", checkout) == second
    assert (checkout / "index.md").read_text() == "# Docs, revised\n"


def test_a_checkout_can_follow_another_branch(origin, tmp_path):
    git(origin, "checkout", "-q", "-b", "v2")
    on_v2 = commit_file(origin, "v2.md", "new\n", "Only on v2")
    git(origin, "checkout", "-q", "main")
    checkout = tmp_path / "checkout"
    assert clone_or_fetch(f"file://{origin}", "v2", checkout) == on_v2
    assert (checkout / "v2.md").exists()
    with pytest.raises(GitError):
        clone_or_fetch(f"file://{origin}", "no-such-branch", checkout)


def test_a_folder_in_the_way_of_a_checkout_is_not_overwritten(origin, tmp_path):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "keep.txt").write_text("mine")
    with pytest.raises(GitError, match="exists and is not a checkout"):
        clone_or_fetch(f"file://{origin}", "", occupied)
    assert (occupied / "keep.txt").read_text() == "mine"


def test_a_missing_git_binary_is_a_git_error(monkeypatch, origin):
    from stackbench.lib import git as git_module

    monkeypatch.setitem(git_module.GIT_ENVIRONMENT, "PATH", "/nonexistent")

    def no_git(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(subprocess, "run", no_git)
    with pytest.raises(GitError, match="git could not run: No such file or directory"):
        git(origin, "status")
