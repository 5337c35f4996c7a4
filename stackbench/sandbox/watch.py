"""Why a running command must stop now: out of time, cancelled, forking past the process limit, or filling the
sandbox's disk. The callers (a terminal, a validated page) ask it while the command runs."""

import os
import time
from collections.abc import Callable
from pathlib import Path

from stackbench.sandbox.sandbox import Sandbox

DISK_CHECK_SECONDS = 2.0


class Watch:
    """Why a running command must stop now, if it must: out of time, cancelled, forking past the process limit,
    or filling the sandbox's disk."""

    def __init__(self, sandbox: Sandbox, timeout: float, should_stop: Callable[[], bool]):
        self.sandbox, self.timeout, self.should_stop = sandbox, timeout, should_stop
        self.started = time.monotonic()
        self.refused = sandbox.refused_forks()
        self.disk = DiskWatch(sandbox)

    def interruption(self) -> str | None:
        now = time.monotonic()
        if now - self.started > self.timeout:
            return "timeout"
        if self.should_stop():
            return "cancelled"
        if self.flooded():
            return "process_limit"
        if self.disk.filled():
            return "disk_limit"
        return None

    def flooded(self) -> bool:
        return self.sandbox.refused_forks() > self.refused


class DiskWatch:
    """Whether a command fills the sandbox's disk (blocks or files). Its folders are measured every
    DISK_CHECK_SECONDS, and at once when the filesystem they are on grows fast (a cheap look at its free blocks
    and inodes between measures). A command that starts with the sandbox over its limits (measured again then:
    an earlier one may have freed space) may run, as a reader can still list or delete files on a full disk, but
    is stopped as soon as the filesystem grows: a dozen steps cannot each add as much again."""

    def __init__(self, sandbox: Sandbox):
        self.sandbox, limits = sandbox, sandbox.limits
        if sandbox.disk_full:
            sandbox.measure_disk()
        self.started_full = sandbox.disk_full
        self.checked = time.monotonic()
        self.filesystem = _filesystem_used(sandbox.root)
        self.slack = (min(limits.disk_bytes // 10, 64 * 1024**2), min(limits.max_files // 10, 20_000))

    def filled(self) -> bool:
        now, filesystem = time.monotonic(), _filesystem_used(self.sandbox.root)
        growing = any(
            used - before > slack for used, before, slack in zip(filesystem, self.filesystem, self.slack, strict=True)
        )
        if self.started_full:
            return growing
        if now - self.checked < DISK_CHECK_SECONDS and not growing:
            return False
        self.checked, self.filesystem = now, filesystem
        return self.sandbox.measure_disk()


def _filesystem_used(folder: Path) -> tuple[int, int]:
    """Blocks (in bytes) and inodes in use on the filesystem holding folder, all users together."""
    try:
        info = os.statvfs(folder)
    except OSError:
        return 0, 0
    return (info.f_blocks - info.f_bfree) * info.f_frsize, info.f_files - info.f_ffree
