"""Running git: a fixed environment (no system or user configuration, no prompts) and a timeout on every call."""

import re
import subprocess
from pathlib import Path

GIT_TIMEOUT = 20
# git is found on the standard system path; nothing of the caller's environment (HOME, GIT_*) changes what it does.
GIT_ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "HOME": "/nonexistent",
    "LC_ALL": "C",
}


class GitError(Exception):
    """A git operation that failed; the message says what git said."""


def git(repo: Path, *args: str, timeout: float = GIT_TIMEOUT) -> str:
    return _run(["git", "-C", str(repo), "--no-pager", *args], args[0], GIT_ENVIRONMENT, timeout)


def _run(argv: list[str], verb: str, env: dict[str, str], timeout: float, cwd: Path | None = None) -> str:
    """git's output, or a GitError with the last line it printed (or why it could not run)."""
    try:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {verb} took longer than {timeout:.0f} s") from None
    except OSError as exc:
        raise GitError(f"git could not run: {exc.strerror}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {verb} failed")
    return done.stdout.decode("utf-8", "replace")


def is_repository(repo: Path) -> bool:
    try:
        return git(repo, "rev-parse", "--is-inside-work-tree").strip() == "true"
    except GitError:
        return False


# Where docs repositories may come from: no ext:: or fd:: transports (they run commands).
ALLOWED_PROTOCOLS = "file:git:http:https:ssh"
REMOTE = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*://|[\w.-]+@[\w.-]+:)")
FETCH_TIMEOUT = 300


def is_remote(location: str) -> bool:
    """A git URL (https://…, git://…, file://…, user@host:path) rather than a folder on this machine."""
    return bool(REMOTE.match(location or ""))


def _remote_git(*args: str, cwd: Path | None = None, timeout: float = FETCH_TIMEOUT) -> str:
    env = {**GIT_ENVIRONMENT, "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS, "GIT_SSH_COMMAND": "ssh -oBatchMode=yes"}
    return _run(["git", *args], args[0], env, timeout, cwd)


def remote_branches(url: str, timeout: float = GIT_TIMEOUT) -> list[str]:
    """The branches a remote repository offers (raises GitError when it cannot be reached)."""
    listing = _remote_git("ls-remote", "--heads", url, timeout=timeout)
    return [line.split("refs/heads/", 1)[1] for line in listing.splitlines() if "refs/heads/" in line]


def clone_or_fetch(url: str, branch: str, checkout: Path) -> str:
    """The checkout of url at the tip of branch (its default branch when empty), cloned the first time and fetched
    after; returns the commit. The checkout is ours: local changes in it are discarded."""
    checkout.parent.mkdir(parents=True, exist_ok=True)
    if not (checkout / ".git").is_dir():
        if checkout.exists():
            raise GitError(f"{checkout} exists and is not a checkout")
        _remote_git("clone", "--quiet", "--no-tags", *(["--branch", branch] if branch else []), url, str(checkout))
    else:
        _remote_git("remote", "set-url", "origin", url, cwd=checkout)
        _remote_git("fetch", "--quiet", "--no-tags", "origin", branch or "HEAD", cwd=checkout)
        _remote_git("reset", "--quiet", "--hard", "FETCH_HEAD", cwd=checkout)
    return git(checkout, "rev-parse", "HEAD").strip()
