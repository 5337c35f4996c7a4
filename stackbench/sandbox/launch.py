"""What launching a process into a sandbox is made of (the sandbox puts it together): the shell every launch
begins with (into the sandbox's cgroups, stderr parked while the launcher's own tools run), its lower priority,
the namespace descriptors of the sandbox's init that later processes join, the seccomp filter handed to
bubblewrap, and what bubblewrap reports back of what it started."""

import json
import os
import select
import subprocess
import time
from pathlib import Path
from typing import Any

from stackbench.sandbox import seccomp_filter
from stackbench.sandbox.prerequisites import SandboxUnavailable

NS_GET_USERNS = 0xB701
START_TIMEOUT = 10.0
NAMESPACE_FDS = ("pid", "owner", "user", "net")
# The first process of every launch: stderr parked on the spare descriptor named first, into the sandbox's cgroups
# (the files named before --), then on to the rest; RESTORE_STDERR takes stderr back from the spare descriptor.
LAUNCH = (
    'spare=$1; shift; while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
    '[ "$spare" = - ] || eval "exec $spare>&2 2>/dev/null"; exec "$@"'
)
RESTORE_STDERR = 'eval "exec 2>&$1 $1>&-"; shift; exec "$@"'
NICENESS = 10  # the dashboard and the worker come first; a run takes what is left (and its cgroup's share)


def printed(process: subprocess.Popen[bytes]) -> str:
    """The end of what a failed launch printed on stderr (every launch pipes it)."""
    if process.stderr is None:
        return ""
    return process.stderr.read().decode("utf-8", "replace")[-500:].strip()


def seccomp_pipe() -> int:
    """A pipe bubblewrap reads the seccomp filter from (the read end; it is small enough to fit)."""
    read, write = os.pipe()
    try:
        os.write(write, seccomp_filter.program())
    finally:
        os.close(write)
    return read


def read_info(fd: int) -> dict[str, Any]:
    """What bubblewrap writes on --info-fd (the command's host pid among it), waiting at most START_TIMEOUT."""
    data, deadline = b"", time.monotonic() + START_TIMEOUT
    try:
        while time.monotonic() < deadline:
            if not select.select([fd], [], [], max(deadline - time.monotonic(), 0))[0]:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
            try:
                return json.loads(data)
            except ValueError:
                continue
        return json.loads(data)
    finally:
        os.close(fd)


def first_child(pid: int) -> int:
    """The host pid of the first child of a process, once it has one (at most START_TIMEOUT)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            children = []
        if children:
            return int(children[0])
        time.sleep(0.002)
    raise SandboxUnavailable("the sandbox's init did not start")
