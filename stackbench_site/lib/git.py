"""Running git: a fixed environment (no system or user configuration, no prompts) and a timeout on every call."""

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
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "--no-pager", *args], capture_output=True, timeout=timeout, env=GIT_ENVIRONMENT
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout:.0f} s") from None
    except OSError as exc:
        raise GitError(f"git could not run: {exc.strerror}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(message[-1] if message else f"git {args[0]} failed")
    return done.stdout.decode("utf-8", "replace")


def is_repository(repo: Path) -> bool:
    try:
        return git(repo, "rev-parse", "--is-inside-work-tree").strip() == "true"
    except GitError:
        return False
