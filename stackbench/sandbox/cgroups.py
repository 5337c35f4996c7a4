"""One sandbox's control groups, where the machine lets the worker create them: a pids group (a ceiling on
processes, and a count of the forks it refused) and a memory group (a ceiling on memory for all of the sandbox's
processes together). Both cgroup layouts are read: v1 (a hierarchy per controller) and v2 (one hierarchy with
the controllers delegated). Groups are created under the worker's own group, never above it."""

import contextlib
import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
FOLDER = "stackbench"
CPU_PERIOD_US = 100_000


def _own_path(controller: str) -> str:
    """The worker's own group for a controller (v1), or its unified group (v2)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controller in controllers.split(",") or (controllers == "" and controller == ""):
                return path.lstrip("/")
    except (OSError, ValueError):
        pass
    return ""


def _parent_for(controller: str) -> Path | None:
    """Where a sandbox's group for this controller can be made, or None when the machine does not let us."""
    v1 = CGROUP_ROOT / controller
    if (v1 / "cgroup.procs").exists():
        parent = v1 / _own_path(controller)
        return parent if os.access(parent, os.W_OK) else None
    unified = CGROUP_ROOT / _own_path("")
    try:
        delegated = controller in (unified / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return unified if delegated and os.access(unified, os.W_OK) else None


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


@dataclass
class Cgroups:
    pids: Path | None = None
    memory: Path | None = None
    cpu: Path | None = None
    max_processes: int = 0
    groups: list[Path] = field(default_factory=list)

    @classmethod
    def create(cls, max_processes: int, memory_bytes: int, cpus: float = 0.0) -> "Cgroups":
        """Groups for what the machine lets us limit: processes, memory, and (with cpus) CPU time, as many CPUs'
        worth per period."""
        made = cls(max_processes=max_processes)
        name = f"{os.getpid()}-{uuid.uuid4().hex[:10]}"
        quota = int(cpus * CPU_PERIOD_US)
        limits = {
            "pids": {"pids.max": str(max_processes)},
            "memory": {"memory.limit_in_bytes": str(memory_bytes), "memory.max": str(memory_bytes)},
            "cpu": {"cpu.cfs_period_us": str(CPU_PERIOD_US), "cpu.cfs_quota_us": str(quota)}
            | {"cpu.max": f"{quota} {CPU_PERIOD_US}"},
        }
        for controller, files in limits.items():
            if controller == "cpu" and quota <= 0:
                continue
            parent = _parent_for(controller)
            if parent is None:
                continue
            group = parent / FOLDER / name  # v2: one group holds every controller
            fresh = group not in made.groups
            if fresh:
                try:
                    group.mkdir(parents=True)
                except OSError:
                    continue
            present = {file: value for file, value in files.items() if (group / file).exists()}
            if not present or not all(_write(group / file, value) for file, value in present.items()):
                if fresh:
                    group.rmdir()
                continue
            setattr(made, controller, group)
            if fresh:
                made.groups.append(group)
        return made

    @property
    def procs_files(self) -> list[str]:
        """The cgroup.procs files a new process of the sandbox writes its pid to."""
        return [str(group / "cgroup.procs") for group in self.groups]

    def describe(self) -> list[str]:
        return [name for name in ("pids", "memory", "cpu") if getattr(self, name) is not None]

    def refused_forks(self) -> int:
        """How many forks the pids group has refused so far (0 without one)."""
        if self.pids is None:
            return 0
        try:
            for line in (self.pids / "pids.events").read_text().splitlines():
                key, _, count = line.partition(" ")
                if key == "max":
                    return int(count)
        except (OSError, ValueError):
            pass
        return 0

    def processes(self) -> list[int]:
        pids: set[int] = set()
        for group in self.groups:
            try:
                pids |= {int(line) for line in (group / "cgroup.procs").read_text().split()}
            except (OSError, ValueError):
                pass
        return sorted(pids)

    def kill_all(self, wait: bool = True, timeout: float = 5.0) -> bool:
        """Kill every process in the groups, with no new forks allowed meanwhile (else a fork bomb refills every
        slot freed). With wait, also until the killed ones no longer count (the machine's init reaps them, late on
        some machines). True when they are all gone."""
        if self.pids is not None:
            _write(self.pids / "pids.max", "0")
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                left = self.processes()
                if not left and (not wait or self._charged() == 0):
                    return True
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.02)
            return False
        finally:
            if self.pids is not None:
                _write(self.pids / "pids.max", str(self.max_processes))

    def _charged(self) -> int:
        # Killed orphans stay charged to the group until init reaps them, which some inits do late.
        if self.pids is None:
            return 0
        try:
            return int((self.pids / "pids.current").read_text())
        except (OSError, ValueError):
            return 0

    def remove_when_empty(self, timeout: float = 30.0) -> None:
        """Remove the groups once their last (already killed) processes are reaped, without waiting for it."""
        groups = list(self.groups)
        self.groups.clear()

        def remove() -> None:
            deadline = time.monotonic() + timeout
            for group in groups:
                with contextlib.suppress(OSError):
                    _remove_when_empty(group, deadline - time.monotonic())

        if groups:
            threading.Thread(target=remove, name="cgroup-removal", daemon=True).start()


def sweep_leftovers() -> None:
    """End the processes left in the groups of sandboxes whose worker died, and remove those groups."""
    for controller in ("pids", "memory", "cpu"):
        parent = _parent_for(controller)
        folder = parent / FOLDER if parent else None
        if folder is None or not folder.is_dir():
            continue
        for group in folder.iterdir():
            owner = group.name.split("-", 1)[0]
            try:
                if not group.is_dir() or (owner.isdigit() and Path(f"/proc/{owner}").exists()):
                    continue
                for pid in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), signal.SIGKILL)
                _remove_when_empty(group, timeout=2)
            except OSError:
                pass


def _remove_when_empty(group: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
