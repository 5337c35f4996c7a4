"""Running commands taken from documents: they are untrusted.

Every child gets an environment built from an allowlist (none of the app's secrets), resource limits
(memory, file size, process count), its own session so its whole process tree can be killed, and where the
machine allows it a pids cgroup (a fork bomb hits a ceiling; cancel kills every descendant) and a private
mount namespace in which the app's folder is read-only and its var/ folder (database, secret key, other runs)
is hidden behind an empty tmpfs.
"""

import ctypes
import os
import pwd
import resource
import shutil
import signal
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18


@dataclass(frozen=True)
class Limits:
    """What an untrusted command may use, and what of the worker it may see."""

    timeout: float = 120.0
    output_bytes: int = 200_000
    memory_bytes: int = 2 * 1024**3
    file_size_bytes: int = 1024**3
    max_processes: int = 256
    hidden_paths: tuple[str, ...] = ()  # emptied (behind a tmpfs) where mounts can be confined
    readonly_paths: tuple[str, ...] = ()
    environment: dict[str, str] = field(default_factory=dict)  # passed through: proxies, locale, pip options
    path: str = "/usr/local/bin:/usr/bin:/bin"


def sandbox_env(home: Path, limits: Limits, extra: dict | None = None) -> dict[str, str]:
    """The whole environment of an untrusted command: an allowlist, never the app's own variables."""
    env = dict(limits.environment)
    user = pwd.getpwuid(os.getuid()).pw_name
    env.update(
        PATH=limits.path,
        HOME=str(home),
        USER=user,
        LOGNAME=user,
        SHELL="/bin/bash",
        TERM="dumb",
        TMPDIR=str(home / ".tmp"),
        PYTHONUNBUFFERED="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        NO_COLOR="1",
        DEBIAN_FRONTEND="noninteractive",
        CI="1",
    )
    (home / ".tmp").mkdir(parents=True, exist_ok=True)
    env.update(extra or {})
    return env


def _pids_cgroup_root() -> Path | None:
    """A pids cgroup folder we may create children in (cgroup v1 layout, or v2 with pids delegated)."""
    v1 = Path("/sys/fs/cgroup/pids")
    if v1.is_dir() and os.access(v1, os.W_OK):
        return v1
    v2 = Path("/sys/fs/cgroup")
    controllers = v2 / "cgroup.subtree_control"
    try:
        if "pids" in controllers.read_text() and os.access(v2, os.W_OK):
            return v2
    except OSError:
        pass
    return None


@dataclass
class ProcessJail:
    """Everything one sandbox starts: the pids cgroup (when available) and process groups to kill."""

    limits: Limits
    workspace: Path
    cgroup: Path | None = None
    groups: set[int] = field(default_factory=set)
    confinement: str = "process group"

    def __post_init__(self):
        root = _pids_cgroup_root()
        if root is None:
            return
        path = root / "stackbench" / uuid.uuid4().hex[:12]
        try:
            path.mkdir(parents=True)
            (path / "pids.max").write_text(str(self.limits.max_processes))
            self.cgroup = path
            self.confinement = "pids cgroup"
        except OSError:
            self.cgroup = None

    def preexec(self):
        """Runs in the child between fork and exec: only plain system calls here."""
        os.setsid()
        limit = self.limits
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_DATA, (limit.memory_bytes, limit.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit.file_size_bytes, limit.file_size_bytes))
        # RLIMIT_NPROC counts every process of the user; it binds only for non-root users.
        resource.setrlimit(resource.RLIMIT_NPROC, (limit.max_processes * 4, limit.max_processes * 4))
        if self.cgroup is not None:
            fd = os.open(str(self.cgroup / "cgroup.procs"), os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
        _confine_mounts(self.limits, self.workspace)

    def track(self, pid: int):
        self.groups.add(pid)

    def limit_hits(self) -> int:
        """How many forks the pids cgroup has refused so far (0 without a cgroup)."""
        if self.cgroup is None:
            return 0
        try:
            for line in (self.cgroup / "pids.events").read_text().splitlines():
                key, _, count = line.partition(" ")
                if key == "max":
                    return int(count)
        except (OSError, ValueError):
            pass
        return 0

    def kill_all(self):
        """Kill every process this sandbox started, descendants included."""
        for group in list(self.groups):
            kill_group(group)
        self.groups.clear()
        if self.cgroup is None:
            return
        # No new forks while we kill, or a fork bomb refills every slot we free.
        self._set_pids_max("0")
        try:
            # Killed orphans stay charged to the cgroup until init reaps them, which some inits do late.
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                pids = self._cgroup_pids()
                if not pids and self._charged() == 0:
                    return
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.02)
        finally:
            self._set_pids_max(str(self.limits.max_processes))

    def _charged(self) -> int:
        try:
            return int((self.cgroup / "pids.current").read_text())
        except (OSError, ValueError):
            return 0

    def _set_pids_max(self, value: str):
        try:
            (self.cgroup / "pids.max").write_text(value)
        except OSError:
            pass

    def _cgroup_pids(self) -> list[int]:
        try:
            return [int(line) for line in (self.cgroup / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def close(self):
        self.kill_all()
        if self.cgroup is not None:
            for _ in range(50):
                try:
                    self.cgroup.rmdir()
                    break
                except OSError:
                    time.sleep(0.02)


def kill_group(group: int):
    """SIGKILL a whole process group; one that is already gone is fine."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def sweep_leftover_jails():
    """Remove the empty pids cgroups of sandboxes whose worker died before closing them."""
    root = _pids_cgroup_root()
    if root is None or not (root / "stackbench").is_dir():
        return
    for jail in (root / "stackbench").iterdir():
        try:
            if jail.is_dir() and not (jail / "cgroup.procs").read_text().split():
                jail.rmdir()
        except OSError:
            pass


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _confine_mounts(limits: Limits, workspace: Path):
    """In the child: a private mount namespace where the app is read-only and var/ is an empty tmpfs.
    Needs CAP_SYS_ADMIN; without it the child runs unconfined (the limits above still hold)."""
    libc = _libc()
    if libc.unshare(CLONE_NEWNS) != 0:
        return
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return
    workspace_text = str(workspace)
    for hidden in limits.hidden_paths:
        if os.path.isdir(hidden) and not workspace_text.startswith(hidden.rstrip("/") + "/"):
            libc.mount(b"tmpfs", hidden.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,mode=0755")
    for path in limits.readonly_paths:
        if os.path.isdir(path) and not workspace_text.startswith(path.rstrip("/") + "/"):
            encoded = path.encode()
            if libc.mount(encoded, encoded, None, MS_BIND | MS_REC, None) == 0:
                libc.mount(b"none", encoded, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC, None)


def as_text(data: bytes) -> str:
    # NUL becomes U+FFFD: PostgreSQL text columns cannot store it.
    return data.decode("utf-8", "replace").replace("\0", "\ufffd")


def head_and_tail(head: bytes, tail: bytes, cut: int) -> str:
    return as_text(head) + f"\n[... {cut} bytes cut ...]\n" + as_text(tail)


def cap_output(data: bytes, limit: int) -> tuple[str, bool]:
    """Keep the head and the tail of a long output: the command and its final error are what matter."""
    if len(data) <= limit:
        return as_text(data), False
    head, tail = data[: limit // 4], data[-(limit - limit // 4) :]
    return head_and_tail(head, tail, len(data) - len(head) - len(tail)), True


def read_capped(path: Path, limit: int) -> tuple[str, bool]:
    """A file's head and tail within the limit, without reading a huge file into memory."""
    if not path.exists():
        return "", False
    size = path.stat().st_size
    with open(path, "rb") as handle:
        if size <= limit:
            return cap_output(handle.read(), limit)
        head = handle.read(limit // 4)
        handle.seek(size - (limit - limit // 4))
        tail = handle.read()
    return head_and_tail(head, tail, size - len(head) - len(tail)), True


def make_workspace(parent: Path | None, prefix: str) -> Path:
    if parent is not None:
        Path(parent).mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=parent)).resolve()


def remove_tree(path: Path):
    shutil.rmtree(path, ignore_errors=True)
