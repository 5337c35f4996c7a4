"""Ending a sandbox's processes: a started command with its process group, and the strays of a PID namespace
(what a finished command left running behind it)."""

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass

STRAY_ROUNDS = 20  # kill-and-look rounds before a flood of strays ends the whole sandbox


@dataclass
class Spawned:
    """A process started in a sandbox: the Popen of its launcher and the host pid of the command itself."""

    popen: subprocess.Popen[bytes]
    pid: int

    def kill(self) -> None:
        """The command's whole process group (the command, and the commands it runs in the foreground)."""
        kill_group(self.pid)
        kill_group(self.popen.pid)


def kill_group(group: int) -> None:
    """SIGKILL a whole process group; one that is already gone is fine."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def processes_in(namespace: int) -> list[int]:
    """Host pids of the processes in a PID namespace (by its inode)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.stat(f"/proc/{entry.name}/ns/pid").st_ino == namespace:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def strays_gone(namespace: int, kept: set[int], one_by_one: bool) -> bool:
    """Whether a PID namespace (by its inode) holds no process but the kept ones. With one_by_one, the others are
    killed and looked for again, STRAY_ROUNDS times at most (a flood may outrun that); without, only looked for."""
    for _ in range(STRAY_ROUNDS if one_by_one else 1):
        strays = [pid for pid in processes_in(namespace) if pid not in kept]
        if not strays:
            return True
        if not one_by_one:
            break
        for pid in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    return False
