"""What confined sandboxes need of the machine: bubblewrap, slirp4netns and the other system tools (looked up in
the system's own folders), user namespaces bubblewrap may create, and libseccomp for the system call filter.
Where something is missing, SandboxUnavailable says so, naming the fix."""

import functools
import os
import subprocess
from pathlib import Path

from stackbench.sandbox import seccomp_filter


class SandboxUnavailable(Exception):
    """No sandbox can be made on this machine; the message names the fix."""


def tool(name: str) -> str:
    """Where a system tool is, looked up in the system's own folders (never a PATH from the environment)."""
    for folder in ("/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin"):
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return name


@functools.cache
def bubblewrap_problem() -> str | None:
    """Why confined sandboxes cannot run here, naming the fix; None when they can."""
    needed = ("bwrap", "slirp4netns", "nsenter", "setpriv", "prlimit", "ip", "keyctl")
    missing = [name for name in needed if tool(name) == name]
    if missing:
        return (
            f"{', '.join(missing)} not found: install Debian's bubblewrap, slirp4netns, util-linux, iproute2 and "
            "keyutils (bin/setup does), or set STACKBENCH_UNCONFINED=1 to run docs' commands with the weaker jail"
        )
    try:
        seccomp_filter.program()
    except seccomp_filter.SeccompUnavailable as exc:
        return str(exc)
    probe = subprocess.run(
        [
            tool("bwrap"),
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=10,
    )
    if probe.returncode != 0:
        return (
            f"bubblewrap cannot create namespaces here ({probe.stderr.strip() or probe.returncode}): allow "
            "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces) "
            "or set STACKBENCH_UNCONFINED=1 to run docs' commands with the weaker jail"
        )
    return None
