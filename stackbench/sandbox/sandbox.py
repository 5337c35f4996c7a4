"""The sandbox every untrusted command runs in: the fresh machine of a newcomer, one per run.

Commands from tutorials, code examples and the Claude agent's tools are untrusted. Each run (an audit, or one
validated page) gets one sandbox, shared by everything that runs for it, built from maintained tools rather than
hand-written namespace code:

- bubblewrap gives it its own user namespace (commands run as uid 1000 inside, mapped to an unprivileged uid of
  its own outside even when the worker is root, with no capabilities), its own PID namespace with its own /proc
  (no process of the host is visible; killing its init ends everything the run started, daemons included), and
  its own mount, IPC and UTS namespaces. The system is mounted read-only; only the reader's home (with the work
  folder), /tmp and /run/stackbench are writable. The app's folder, var/, the worker's home and other runs'
  folders are never mounted.
- slirp4netns gives its network namespace outbound NAT, so package registries are reachable; the host's
  loopback, the host's own addresses and private ranges are not (prohibit routes the sandboxed user cannot
  change); its own loopback means any port is free.
- Limits: a pids cgroup and a memory cgroup where the machine lets the worker create them, rlimits otherwise (and
  always: processes per uid, data size, file size, no core dumps), the size of its folder (checked), and per
  command a time limit and an output cap (applied by the callers).
- A fresh Python virtualenv and an npm prefix first on PATH, so `pip install` and `npm i -g` change only this run.

Processes after the first join the sandbox's namespaces: `nsenter --net` (into its network), `setpriv` (down to
its uid), then `bwrap --userns/--pidns` (into its users and processes). Where bubblewrap cannot run, sandboxes
are refused with a message naming the fix, unless `unconfined` is set explicitly: then commands get only an
allowlisted environment, rlimits, cgroups and their own folders (and the run says so).
"""

import contextlib
import errno
import fcntl
import functools
import ipaddress
import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit

from stackbench.sandbox import host_view, seccomp_filter
from stackbench.sandbox.capture import read_capped
from stackbench.sandbox.cgroups import Cgroups
from stackbench.sandbox.files import Planted, SandboxFiles, copy_tree, tree_usage
from stackbench.sandbox.venv_copies import VenvCopy, keep_template, new_sandbox_uid, release, take_copy, template_folder

READER_UID = 1000
HOME = "/home/reader"
WORK = f"{HOME}/work"
STATE = "/run/stackbench"
TOOLS = "/run/stackbench-tools"
VENV = f"{HOME}/.venv"
NPM_PREFIX = f"{HOME}/.npm-global"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
# Unreachable from a sandbox: private and link-local ranges (cloud metadata among them), shared address space,
# and slirp's gateway, which stands for the host's loopback. The host's own addresses are added per sandbox.
PROHIBITED_RANGES = (
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "169.254.0.0/16",
    "100.64.0.0/10",
    "198.18.0.0/15",
    "10.0.2.2/32",
)
SLIRP_GATEWAY, SLIRP_DNS = "10.0.2.2", "10.0.2.3"
REGISTRY_TABLE, REGISTRY_RULE = 100, 100  # the routing table and rule priority of registries at private addresses
NS_GET_USERNS = 0xB701
START_TIMEOUT = 10.0
DISK_CHECK_SECONDS = 2.0
STRAY_ROUNDS = 20  # kill-and-look rounds before a flood of strays ends the whole sandbox
NAMESPACE_FDS = ("pid", "owner", "user", "net")
# The first process of every launch: stderr parked on the spare descriptor named first, into the sandbox's cgroups
# (the files named before --), then on to the rest; RESTORE_STDERR takes stderr back from the spare descriptor.
LAUNCH = (
    'spare=$1; shift; while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; '
    '[ "$spare" = - ] || eval "exec $spare>&2 2>/dev/null"; exec "$@"'
)
RESTORE_STDERR = 'eval "exec 2>&$1 $1>&-"; shift; exec "$@"'
NICENESS = 10  # the dashboard and the worker come first; a run takes what is left (and its cgroup's share)


class SandboxUnavailable(Exception):
    """No sandbox can be made on this machine; the message names the fix."""


@dataclass(frozen=True)
class Limits:
    timeout: float = 120.0  # seconds per command
    output_bytes: int = 200_000  # output kept per command (head and tail)
    memory_bytes: int = 2 * 1024**3
    file_size_bytes: int = 1024**3
    max_processes: int = 256
    disk_bytes: int = 4 * 1024**3  # the sandbox's folder (home, work, /tmp)
    max_files: int = 500_000  # files and folders in it: inodes run out like blocks do
    cpus: float = 1.0  # CPU time, in CPUs' worth, where a cpu cgroup can be made (0: no cap)


@dataclass(frozen=True)
class Profile:
    """The reader's machine: which Python their virtualenv is made from, which Node is installed, what network."""

    python: str = "/usr/bin/python3"
    python_version: str = ""
    node: str | None = None
    node_version: str = ""
    network: str = "registries"  # registries: the internet without the host and private networks; none

    def describe(self) -> dict:
        return {
            "python": self.python_version or self.python,
            "node": self.node_version or ("none" if not self.node else self.node),
            "network": "registries only" if self.network == "registries" else "none",
        }


@dataclass(frozen=True)
class SandboxSettings:
    limits: Limits = field(default_factory=Limits)
    profile: Profile = field(default_factory=Profile)
    environment: dict[str, str] = field(default_factory=dict)  # passed through: proxies, locale, pip options
    hidden_paths: tuple[str, ...] = ()  # host folders never visible inside (the app's, var/, the worker's home)
    reachable_hosts: tuple[str, ...] = ()  # registries: reachable even where they resolve to a private address
    tools: dict[str, str] = field(default_factory=dict)  # name -> host file, read-only at /run/stackbench-tools
    templates_dir: str | None = None  # where reader virtualenvs are kept to copy from
    scratch_dir: str | None = None  # where sandbox folders are made (default: the system's temp folder)
    unconfined: bool = False


@dataclass
class Spawned:
    """A process started in a sandbox: the Popen of its launcher and the host pid of the command itself."""

    popen: subprocess.Popen
    pid: int

    def kill(self):
        """The command's whole process group (the command, and the commands it runs in the foreground)."""
        kill_group(self.pid)
        kill_group(self.popen.pid)


class Watch:
    """Why a running command must stop now, if it must: out of time, cancelled, forking past the process limit,
    or filling the sandbox's disk."""

    def __init__(self, sandbox: "Sandbox", timeout: float, should_stop: Callable[[], bool]):
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

    def __init__(self, sandbox: "Sandbox"):
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


# Without udev, /dev/net/tun stays 0600 and slirp4netns (run as the run's own user) cannot open it.
TUN_HINT = " (make /dev/net/tun usable by every user, as udev does: chmod 0666 /dev/net/tun; bin/setup does it)"


def kill_group(group: int):
    """SIGKILL a whole process group; one that is already gone is fine."""
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


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


def open_sandbox(
    settings: SandboxSettings, label: str, work_dir: Path | None = None, read_only: list[Path] | None = None
) -> "Sandbox":
    """A started sandbox: confined with bubblewrap, or unconfined when the settings say so explicitly. read_only
    lists host folders shown read-only inside (wheel folders to install from); sandbox.read_only says where."""
    secret = credential_in(settings.environment)
    if secret:
        raise SandboxUnavailable(
            f"{secret} carries a user name or password, and commands taken from docs could read it: give the "
            "sandbox a registry or proxy that needs none, or keep the variable out of the worker's environment"
        )
    if settings.unconfined:
        return UnconfinedSandbox(settings, label, work_dir, read_only)
    return Sandbox(settings, label, work_dir, read_only)


def credential_in(environment: dict[str, str]) -> str | None:
    """The first passed-through variable whose value holds a URL with a user name or password in it (an index
    URL, a proxy; several may be listed, some as name=URL)."""
    for name, value in environment.items():
        for word in re.split(r"[\s,]+", value):
            url = word.split("=", 1)[1] if "=" in word.split("://", 1)[0] else word
            if "://" in url:
                try:
                    parts = urlsplit(url)
                    if parts.username or parts.password:
                        return name
                except ValueError:
                    return name  # not even a URL we can read: not one to hand over
    return None


class Sandbox:
    """One run's machine. Paths given to and taken from it are paths inside it (HOME, WORK, STATE). The worker
    touches its files only through self.files (sandbox_files: no link followed, nothing shared written), and keeps
    its own logs of the sandbox's processes in a folder the sandbox cannot see (private_file)."""

    confinement = "bubblewrap"

    def __init__(
        self, settings: SandboxSettings, label: str, work_dir: Path | None = None, read_only: list[Path] | None = None
    ):
        problem = bubblewrap_problem()
        if problem:
            raise SandboxUnavailable(problem)
        self.settings, self.limits = settings, settings.limits
        self._read_only_hosts = [Path(folder) for folder in read_only or []]
        self.read_only = [f"/run/stackbench-ro/{index}" for index in range(len(self._read_only_hosts))]
        started = time.monotonic()
        self.is_root = os.geteuid() == 0
        self.disk_full = False
        self.root = _make_root(settings, label)
        self.home, self.work, self.state, self.tmp = HOME, WORK, STATE, "/tmp"
        # A folder of the user's choice is copied in, and what the run leaves there copied back at the end (the
        # sandbox's user may not even be able to reach it where it is).
        self._chosen = Path(work_dir).resolve() if work_dir else None
        self.cgroups = Cgroups()
        self.files: SandboxFiles | None = None
        self._fds: dict[str, int] = {}
        self._init: subprocess.Popen | None = None
        self._slirp: subprocess.Popen | None = None
        self._slirp_exit: int | None = None
        try:
            venv = self._take_venv_copy()
            self.uid = venv.uid if venv and venv.uid is not None else new_sandbox_uid() if self.is_root else os.getuid()
            self.gid = self.uid if self.is_root else os.getgid()
            self.files = SandboxFiles(
                {HOME: self.root / "home", STATE: self.root / "state", "/tmp": self.root / "tmp"}, self._owner
            )
            self._prepare_folders(venv)
            self.cgroups = Cgroups.create(self.limits.max_processes, self.limits.memory_bytes, self.limits.cpus)
            self._open_mount_sources()
            self._start()
            if venv is None:
                self._make_venv()
        except BaseException:
            self.close()
            raise
        self.start_seconds = time.monotonic() - started

    @property
    def _owner(self) -> tuple[int, int] | None:
        """Who the reader is on the host, for what the worker makes for it (None: the worker itself)."""
        return (self.uid, self.gid) if self.is_root else None

    # -- what runs inside ----------------------------------------------------------------------------------------
    @property
    def environment(self) -> dict[str, str]:
        """The reader's environment: an allowlist, never the app's own variables."""
        return reader_environment(self.settings, HOME, "/tmp")

    def spawn(
        self,
        argv: list[str],
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stdin=None,
        stdout=None,
        stderr=None,
        pass_fds: tuple[int, ...] = (),
    ) -> Spawned:
        """Start argv inside the sandbox in a session of its own, with env as its whole environment."""
        if self._init is None or self._init.poll() is not None:
            self._start()
        info_read, info_write = os.pipe()
        filter_fd = _seccomp_pipe()
        environment = env if env is not None else self.environment
        join = self._join_arguments()
        passed = (*self._fds.values(), info_write, filter_fd, *pass_fds)
        # bubblewrap hands the namespace descriptors it joined on to the command: close them first (bash, as dash
        # cannot name descriptors above 9).
        closing = " ".join(f"{fd}>&-" for name, fd in self._fds.items() if name in NAMESPACE_FDS)
        command = [
            *self._launcher(passed, network=True),
            tool("bwrap"),
            *join,
            *self._mounts(),
            "--die-with-parent",
            "--new-session",
            "--seccomp",
            str(filter_fd),
            "--chdir",
            cwd or self.work,
            "--clearenv",
            *[part for name, value in environment.items() for part in ("--setenv", name, value)],
            "--info-fd",
            str(info_write),
            "--",
            "/bin/bash",
            "-c",
            f'exec {closing}; exec "$@"',
            "bash",
            *argv,
        ]
        try:
            popen = subprocess.Popen(
                command,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env={},
                pass_fds=passed,
                start_new_session=True,
            )
        finally:
            os.close(info_write)
            os.close(filter_fd)
        try:
            pid = _read_info(info_read)["child-pid"]
        except (ValueError, KeyError):
            popen.kill()
            popen.wait()
            raise SandboxUnavailable(
                f"the sandbox could not start {argv[0]}: bubblewrap exited with {popen.returncode}"
            ) from None
        return Spawned(popen, pid)

    def run(
        self,
        argv: list[str],
        timeout: float,
        cwd: str | None = None,
        env: dict | None = None,
        input: bytes | None = None,
        output_limit: int = 1024**2,
    ) -> subprocess.CompletedProcess:
        """Run a command to its end inside as the reader (setting the sandbox up, or using a file the worker must
        not touch itself). Its output goes to the worker's private folder (a flood costs no memory) and is kept
        within output_limit; time limited."""
        with self.private_file("run") as log:
            spawned = self.spawn(
                argv,
                cwd,
                env,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            try:
                spawned.popen.communicate(input=input, timeout=timeout)
            except subprocess.TimeoutExpired:
                spawned.kill()
                spawned.popen.communicate()
            output, _ = read_capped(log.fileno(), output_limit)
        return subprocess.CompletedProcess(argv, spawned.popen.returncode, output)

    def kill_processes(self, wait: bool = True):
        """End every process of the sandbox: its PID namespace goes with its init. The next spawn starts a new
        init (same folders, fresh processes and network). With wait, return once the process count is back to
        zero (a flood's processes stay charged until the machine's init reaps them)."""
        if self._init is not None:
            kill_group(self._init.pid)
            self._init.wait()
            self._init = None
        self._stop_network()
        self.cgroups.kill_all(wait=wait)
        for name in NAMESPACE_FDS:
            fd = self._fds.pop(name, None)
            if fd is not None:
                os.close(fd)

    def kill_strays(self, keep: Iterable[int] = ()):
        """End whatever a finished command left running behind it. Without keep, leftovers (a daemon, a detached
        fork bomb) take the whole process tree with them: the sandbox's processes start afresh, its files stay.
        With keep (host pids of processes that must live on, such as a page runner), the others are killed one by
        one; if they outrun that, everything goes."""
        if self._init is None or "pid" not in self._fds:
            return
        kept = {self._init.pid, *self._init_pids, *keep}
        namespace = os.fstat(self._fds["pid"]).st_ino
        for _ in range(STRAY_ROUNDS if keep else 1):
            strays = [pid for pid in _processes_in(namespace) if pid not in kept]
            if not strays:
                return
            if not keep:
                break
            for pid in strays:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)
        self.kill_processes()

    def refused_forks(self) -> int:
        return self.cgroups.refused_forks()

    def measure_disk(self) -> bool:
        """Whether the sandbox's folders take more blocks, or hold more files, than its limits allow (counting
        stops there; a tree nested past any project's depth counts as over)."""
        limits = self.limits
        used = tree_usage(self.root, limits.disk_bytes, limits.max_files)
        self.disk_full = used.too_deep or used.bytes > limits.disk_bytes or used.files > limits.max_files
        return self.disk_full

    # -- files ---------------------------------------------------------------------------------------------------
    def write_file(self, inside: str, text: str, append: bool = False):
        """Write a file as the reader would (its folders made as needed). Where the run put a link on the way, the
        reader's own shell writes it, inside, with the reader's rights: the worker never follows a link."""
        data = text.encode()
        try:
            self.files.write(inside, data, append)
        except Planted:
            redirect = ">>" if append else ">"
            self._as_reader(inside, f'mkdir -p -- "$(dirname -- "$1")" && cat {redirect} "$1"', data)

    def read_file(self, inside: str, limit: int) -> str | None:
        """A file's text as the reader sees it (read inside, by the reader, where a link is on the way); None when
        there is no such file."""
        try:
            return self.files.read(inside, limit).decode("utf-8", "replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        except Planted:
            return self._as_reader(inside, 'cat -- "$1"', None, limit)

    def _as_reader(self, inside: str, script: str, data: bytes | None, limit: int = 1024**2) -> str:
        done = self.run(
            ["/bin/sh", "-c", script, "sh", inside], self.limits.timeout, cwd=self.work, input=data, output_limit=limit
        )
        if done.returncode != 0:
            raise OSError(errno.EACCES, done.stdout.strip()[-300:] or f"{inside} cannot be used")
        return done.stdout

    def private_file(self, prefix: str) -> BinaryIO:
        """A new file of the worker's own, for what a sandbox process prints: in a folder the sandbox cannot see
        or change, so what the worker reads back is only ever what the process wrote. The caller closes it."""
        handle = os.open(
            self.root / "worker" / f"{prefix}-{secrets.token_hex(8)}.log",
            os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
        return open(handle, "w+b")

    def describe(self) -> dict:
        return {
            "confinement": self.confinement,
            **self.settings.profile.describe(),
            "limits": f"{self.limits.max_processes} processes, {self.limits.memory_bytes // 1024**2} MB memory, "
            f"{self.limits.disk_bytes // 1024**2} MB disk, {self.limits.max_files:,} files"
            + (f", {self.limits.cpus:g} CPU" if self.cgroups.cpu is not None else ""),
            "cgroups": ", ".join(self.cgroups.describe()) or "none (rlimits only)",
        }

    def close(self):
        if not self.root.exists():
            return
        self.kill_processes(wait=False)
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self.cgroups.remove_when_empty()
        if self._chosen is not None and self.files is not None:
            # Copied back by descriptor, following no link on either side: a run that made its work folder (or
            # anything in it) a link to a host folder gets nothing of that folder out, and no file of the chosen
            # folder is written through a link an earlier run left there.
            info = self._chosen.stat()
            with contextlib.suppress(OSError):
                copy_tree(self.root / "home", "work", self._chosen, (info.st_uid, info.st_gid))
        shutil.rmtree(self.root, ignore_errors=True)

    # -- setting up ----------------------------------------------------------------------------------------------
    def _prepare_folders(self, venv: VenvCopy | None):
        for name in ("home", "tmp", "state", "etc"):
            (self.root / name).mkdir()
        (self.root / "worker").mkdir(mode=0o700)
        (self.root / "home" / "work").mkdir()
        if self._chosen is not None:
            self._chosen.mkdir(parents=True, exist_ok=True)
            copy_tree(self._chosen.parent, self._chosen.name, self.root / "home" / "work", self._owner)
        if venv is not None:
            os.rename(venv.path, self.root / "home" / ".venv")
            release(venv)
        (self.root / "home" / ".npm-global" / "bin").mkdir(parents=True)
        etc = self.root / "etc"
        (etc / "passwd").write_text(
            f"root:x:0:0:root:/root:/bin/sh\nreader:x:{READER_UID}:{READER_UID}:Reader:{HOME}:"
            "/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        )
        (etc / "group").write_text(f"root:x:0:\nreader:x:{READER_UID}:\nnogroup:x:65534:\n")
        (etc / "resolv.conf").write_text(f"nameserver {SLIRP_DNS}\n")
        (etc / "hosts").write_text("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
        (etc / "empty").touch(mode=0o444)
        if self._owner is not None:
            for name in ("home", "home/work", "home/.npm-global", "home/.npm-global/bin", "tmp", "state"):
                os.chown(self.root / name, *self._owner, follow_symlinks=False)
        etc.chmod(0o755)

    def _open_mount_sources(self):
        """The folders and files bound into the sandbox, opened once by the worker and passed as descriptors.
        bubblewrap runs as the sandbox's user: what that user cannot reach where it is is copied into the sandbox's
        own folder first."""
        sources = {
            "home": self.root / "home",
            "tmp": self.root / "tmp",
            "state": self.root / "state",
            **{f"etc/{n}": self.root / "etc" / n for n in ("passwd", "group", "resolv.conf", "hosts")},
            **{
                f"tool/{name}": self._reachable(Path(path), f"tools/{name}")
                for name, path in self.settings.tools.items()
            },
            **{
                f"ro:{inside}": self._reachable(host, f"ro/{index}")
                for index, (inside, host) in enumerate(zip(self.read_only, self._read_only_hosts, strict=True))
            },
        }
        for name, path in sources.items():
            self._fds[name] = os.open(path, os.O_PATH)

    def _reachable(self, path: Path, staged: str) -> Path:
        if not self.is_root or reachable_by_anyone(path):
            return path
        target = self.root / staged
        target.parent.mkdir(parents=True, exist_ok=True)
        target.parent.chmod(0o755)
        subprocess.run([tool("cp"), "-r", str(path), str(target)], check=True, timeout=600)
        subprocess.run([tool("chmod"), "-R", "a+rX", str(target)], check=True, timeout=600)
        return target

    def _mounts(self) -> list[str]:
        fd = self._fds
        profile = self.settings.profile
        hidden = [Path(path) for path in self.settings.hidden_paths if Path(path).is_dir() and path != "/"]
        if self.is_root:
            # Behind a folder others cannot enter, the reader could not get there anyway (and bubblewrap, as the
            # reader, cannot make the mount point).
            hidden = [path for path in hidden if reachable_by_anyone(path.resolve().parent)]
        # A folder inside another hidden one is gone with it.
        hidden = [path for path in hidden if not any(path != other and path.is_relative_to(other) for other in hidden)]
        interpreters = [profile.python, *([profile.node] if profile.node else [])]
        mounts = host_view.mounts(interpreters, [str(p) for p in hidden], str(self.root / "etc" / "empty"))
        mounts += [
            "--tmpfs",
            "/home",
            "--bind-fd",
            str(fd["home"]),
            HOME,
            "--bind-fd",
            str(fd["tmp"]),
            "/tmp",
            "--tmpfs",
            "/var/tmp",
            "--tmpfs",
            "/run",
            "--bind-fd",
            str(fd["state"]),
            STATE,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
        ]
        for name in ("passwd", "group", "resolv.conf", "hosts"):
            mounts += ["--ro-bind-fd", str(fd[f"etc/{name}"]), f"/etc/{name}"]
        for name in self.settings.tools:
            mounts += ["--ro-bind-fd", str(fd[f"tool/{name}"]), f"{TOOLS}/{name}"]
        for inside in self.read_only:
            mounts += ["--ro-bind-fd", str(fd[f"ro:{inside}"]), inside]
        return mounts

    def _launcher(self, passed: tuple[int, ...], network: bool) -> list[str]:
        """What every process of the sandbox starts through: its cgroups, a new session keyring, a lower CPU
        priority, its rlimits, its uid, its network. keyctl announces the keyring it made on stderr: stderr waits on
        a spare descriptor (above those passed) while it runs, and is back for everything after."""
        spare = str(max(passed, default=2) + 1)
        prefix = ["/bin/bash", "-c", LAUNCH, "launch", spare, *self.cgroups.procs_files, "--"]
        prefix += [tool("nice"), "-n", str(NICENESS), tool("keyctl"), "session", "-"]
        prefix += ["/bin/bash", "-c", RESTORE_STDERR, "restore", spare]
        limits = [f"--data={self.limits.memory_bytes}", f"--fsize={self.limits.file_size_bytes}", "--core=0"]
        if self.is_root and self.cgroups.pids is None:
            # Without a pids cgroup, the per-uid count caps a fork bomb (the sandbox's uid is its own). With one, the
            # cgroup refuses first, and counts what it refused.
            limits.append(f"--nproc={self.limits.max_processes}")
        prefix += [tool("prlimit"), *limits, "--"]
        drop = ["--reuid", str(self.uid), "--regid", str(self.gid), "--clear-groups"] if self.is_root else []
        prefix += [tool("setpriv"), *drop, "--no-new-privs", "--"]
        if network:
            # Into the sandbox's network through its user namespace, as its root there (the run's own uid outside):
            # no privilege of the worker's is needed, so a worker that is not root starts sandboxes too.
            fd = self._fds
            prefix += [tool("nsenter"), f"--user=/proc/self/fd/{fd['owner']}", f"--net=/proc/self/fd/{fd['net']}"]
            prefix += ["--preserve-credentials", "--"]
        return [*prefix, tool("env"), "-i", "--"]

    def _join_arguments(self) -> list[str]:
        # bubblewrap makes two user namespaces (the first maps root, for /dev/pts): the PID namespace belongs to
        # the first, the commands run in the second.
        fd = self._fds
        if os.fstat(fd["owner"]).st_ino == os.fstat(fd["user"]).st_ino:
            users = ["--uid", str(READER_UID), "--gid", str(READER_UID)]
        else:
            users = ["--userns2", str(fd["user"]), "--uid", "0", "--gid", "0"]
        return [*users, "--pidns", str(fd["pid"])]

    def _start(self):
        """Start the sandbox's init (which holds its namespaces) and its network."""
        info_read, info_write = os.pipe()
        mount_fds = tuple(value for name, value in self._fds.items() if name not in NAMESPACE_FDS)
        command = [
            *self._launcher((*mount_fds, info_write), network=False),
            tool("bwrap"),
            "--unshare-user",
            "--uid",
            str(READER_UID),
            "--gid",
            str(READER_UID),
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--unshare-cgroup-try",
            "--die-with-parent",
            "--new-session",
            *self._mounts(),
            "--chdir",
            HOME,
            "--clearenv",
            "--info-fd",
            str(info_write),
            "--",
            "sleep",
            "infinity",
        ]
        try:
            self._init = subprocess.Popen(
                command,
                env={},
                pass_fds=(*mount_fds, info_write),
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        finally:
            os.close(info_write)
        try:
            reaper = _read_info(info_read)["child-pid"]
        except (ValueError, KeyError):
            kill_group(self._init.pid)
            self._init.wait(timeout=START_TIMEOUT)
            raise SandboxUnavailable(f"bubblewrap could not start the sandbox: {_printed(self._init)}") from None
        try:
            command_pid = _first_child(reaper)
        except SandboxUnavailable:
            kill_group(self._init.pid)
            self._init.wait(timeout=START_TIMEOUT)
            raise SandboxUnavailable(f"the sandbox's init did not start: {_printed(self._init)}") from None
        self._init_pids = (reaper, command_pid)
        self._fds["pid"] = os.open(f"/proc/{reaper}/ns/pid", os.O_RDONLY)
        self._fds["net"] = os.open(f"/proc/{reaper}/ns/net", os.O_RDONLY)
        self._fds["owner"] = fcntl.ioctl(self._fds["pid"], NS_GET_USERNS)
        self._fds["user"] = os.open(f"/proc/{command_pid}/ns/user", os.O_RDONLY)
        if self.settings.profile.network == "registries":
            self._start_network()

    def _start_network(self):
        """slirp4netns for outbound NAT, then the routes that keep the host and private networks out of reach."""
        ready_read, ready_write = os.pipe()
        exit_read, self._slirp_exit = os.pipe()
        owner, net = self._fds["owner"], self._fds["net"]
        drop = (
            [tool("setpriv"), "--reuid", str(self.uid), "--regid", str(self.gid), "--clear-groups"]
            if self.is_root
            else []
        )
        try:
            # slirp4netns reads every packet the run sends: it runs as the run's uid, with a keyring of its own,
            # in a sandbox of its own (an empty root) under its own seccomp filter.
            self._slirp = subprocess.Popen(
                [
                    *["/bin/bash", "-c", LAUNCH, "launch", str(max(owner, net, ready_write, exit_read) + 1), "--"],
                    *[tool("keyctl"), "session", "-"],
                    *["/bin/bash", "-c", RESTORE_STDERR, "restore", str(max(owner, net, ready_write, exit_read) + 1)],
                    *drop,
                    # As root of the sandbox's user namespace (only there): slirp4netns then locks itself into an
                    # empty mount namespace and drops every capability before it reads a packet.
                    tool("nsenter"),
                    f"--user=/proc/self/fd/{owner}",
                    "--preserve-credentials",
                    tool("slirp4netns"),
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
                    "--enable-sandbox",
                    "--enable-seccomp",
                    f"--ready-fd={ready_write}",
                    f"--exit-fd={exit_read}",
                    f"--userns-path=/proc/self/fd/{owner}",
                    "--netns-type=path",
                    f"/proc/self/fd/{net}",
                    "tap0",
                ],
                env={},
                pass_fds=(ready_write, exit_read, owner, net),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        finally:
            os.close(ready_write)
            os.close(exit_read)
        with os.fdopen(ready_read, "rb") as ready:
            if ready.read(1) != b"1":
                self._slirp.wait(timeout=START_TIMEOUT)
                reason = _printed(self._slirp)
                if "/dev/net/tun" in reason:
                    reason += TUN_HINT
                raise SandboxUnavailable(f"slirp4netns could not give the sandbox a network: {reason}")
        routes = network_routes(self.settings.reachable_hosts)
        done = subprocess.run(
            [
                *drop,
                tool("nsenter"),
                f"--user=/proc/self/fd/{owner}",
                f"--net=/proc/self/fd/{net}",
                "--preserve-credentials",
                tool("ip"),
                "-batch",
                "-",
            ],
            input="\n".join(routes) + "\n",
            capture_output=True,
            text=True,
            env={"PATH": SYSTEM_PATH},
            pass_fds=(owner, net),
            timeout=START_TIMEOUT,
        )
        if done.returncode != 0:
            raise SandboxUnavailable(f"the sandbox's routes could not be set: {done.stderr.strip()[-500:]}")

    def _stop_network(self):
        if self._slirp_exit is not None:
            os.close(self._slirp_exit)
            self._slirp_exit = None
        if self._slirp is not None:
            try:
                self._slirp.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self._slirp.kill()
                self._slirp.wait()
            self._slirp = None

    def _take_venv_copy(self) -> VenvCopy | None:
        """The reader's own virtualenv, first on PATH: a private copy of the template for this Python (None until
        there is a template; the first sandbox makes it)."""
        template = self._template()
        if template is None or not template.is_dir():
            return None
        return take_copy(template, self.root.parent, self.is_root)

    def _template(self) -> Path | None:
        profile = self.settings.profile
        return template_folder(
            self.settings.templates_dir, profile.python, profile.python_version, self.settings.tools.get("uv")
        )

    def _make_venv(self):
        """No template yet: the reader's virtualenv is made inside (before any command of the run), and kept."""
        made = self.run(self._venv_command(), timeout=300, cwd=HOME)
        if made.returncode != 0:
            raise SandboxUnavailable(f"the reader's virtualenv could not be made: {made.stdout.strip()[-800:]}")
        template = self._template()
        if template is not None:
            keep_template(self.root / "home" / ".venv", template)

    def _venv_command(self) -> list[str]:
        python = self.settings.profile.python
        if "uv" in self.settings.tools:
            return [
                "/bin/sh",
                "-c",
                f'UV_CACHE_DIR=/tmp/.uv-cache exec "{TOOLS}/uv" venv --quiet --seed '
                f'--python "{python}" "{VENV}" && rm -rf /tmp/.uv-cache',
            ]
        return [python, "-m", "venv", VENV]


class UnconfinedSandbox(Sandbox):
    """The weaker jail, only when STACKBENCH_UNCONFINED=1 says so: commands run as the worker's user, in their own
    folders and sessions, with an allowlisted environment, rlimits and cgroups, but see the whole machine. Inside
    paths are host paths."""

    confinement = "unconfined"

    def __init__(
        self, settings: SandboxSettings, label: str, work_dir: Path | None = None, read_only: list[Path] | None = None
    ):
        self.settings, self.limits = settings, settings.limits
        # Without a mount namespace, read-only folders are seen where they are on the host.
        self.read_only = [str(folder) for folder in read_only or []]
        started = time.monotonic()
        self.root = _make_root(settings, label)
        self.is_root, self.uid, self.gid = False, os.getuid(), os.getgid()
        self.disk_full = False
        work_host = Path(work_dir).resolve() if work_dir else self.root / "home" / "work"
        self._chosen = None
        self.home, self.work = str(self.root / "home"), str(work_host)
        self.state, self.tmp = str(self.root / "state"), str(self.root / "tmp")
        for name in ("home", "tmp", "state"):
            (self.root / name).mkdir()
        (self.root / "worker").mkdir(mode=0o700)
        work_host.mkdir(parents=True, exist_ok=True)
        self.files = SandboxFiles(
            {path: Path(path) for path in (self.home, self.state, self.tmp, self.work)}, owner=None
        )
        (self.root / "home" / ".npm-global" / "bin").mkdir(parents=True)
        self.cgroups = Cgroups.create(self.limits.max_processes, self.limits.memory_bytes, self.limits.cpus)
        self._fds, self._groups = {}, set()
        self._init = self._slirp = self._slirp_exit = None
        uv = settings.tools.get("uv")
        command = (
            [uv, "venv", "--quiet", "--seed", "--python", settings.profile.python, f"{self.home}/.venv"]
            if uv
            else [settings.profile.python, "-m", "venv", f"{self.home}/.venv"]
        )
        made = subprocess.run(
            command,
            timeout=300,
            capture_output=True,
            text=True,
            env={**settings.environment, "PATH": SYSTEM_PATH, "HOME": self.home},
        )
        if made.returncode != 0:
            shutil.rmtree(self.root, ignore_errors=True)
            raise SandboxUnavailable(f"the reader's virtualenv could not be made: {made.stderr.strip()[-800:]}")
        self.start_seconds = time.monotonic() - started

    @property
    def environment(self) -> dict[str, str]:
        return reader_environment(self.settings, self.home, self.tmp)

    def spawn(self, argv, cwd=None, env=None, stdin=None, stdout=None, stderr=None, pass_fds=()) -> Spawned:
        prefix = ["/bin/bash", "-c", LAUNCH, "launch", "-", *self.cgroups.procs_files, "--"]
        limits = [f"--data={self.limits.memory_bytes}", f"--fsize={self.limits.file_size_bytes}", "--core=0"]
        popen = subprocess.Popen(
            [*prefix, tool("nice"), "-n", str(NICENESS), tool("prlimit"), *limits, "--", *argv],
            cwd=cwd or self.work,
            env=env if env is not None else self.environment,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pass_fds=pass_fds,
            start_new_session=True,
        )
        self._groups.add(popen.pid)
        return Spawned(popen, popen.pid)

    def kill_processes(self, wait: bool = True):
        for group in self._groups:
            kill_group(group)
        self._groups.clear()
        self.cgroups.kill_all(wait=wait)

    def kill_strays(self, keep: Iterable[int] = ()):
        kept = set(keep)
        for group in [g for g in self._groups if g not in kept]:
            kill_group(group)
            self._groups.discard(group)
        if not kept:
            self.cgroups.kill_all(wait=False)


def reader_environment(settings: SandboxSettings, home: str, tmp: str) -> dict[str, str]:
    """A newcomer's shell environment: their own virtualenv and npm prefix first on PATH, plain output, no
    prompts; plus what is passed through (proxies, locale, pip options). Never the app's own variables."""
    env = dict(settings.environment)
    env.setdefault("LANG", "C.UTF-8")
    env.update(
        PATH=f"{home}/.venv/bin:{home}/.npm-global/bin:{SYSTEM_PATH}",
        HOME=home,
        USER="reader",
        LOGNAME="reader",
        SHELL="/bin/bash",
        TERM="dumb",
        TMPDIR=tmp,
        PYTHONUNBUFFERED="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        NO_COLOR="1",
        CI="1",
        # No one at the keyboard: a pager shows everything, an editor closes at once without changes.
        PAGER="cat",
        GIT_PAGER="cat",
        EDITOR="true",
        VISUAL="true",
        DEBIAN_FRONTEND="noninteractive",
        NPM_CONFIG_PREFIX=f"{home}/.npm-global",
        NPM_CONFIG_UPDATE_NOTIFIER="false",
        NPM_CONFIG_FUND="false",
    )
    return env


def network_routes(reachable_hosts: tuple[str, ...]) -> list[str]:
    """`ip -batch` lines: prohibit the private ranges and the host's own addresses; let a registry that resolves
    to a private address through on its own ports only (443 and 80, or the port it is named with), by a rule
    that sends just those ports to a table of their own: a mirror on the host's address opens no other service
    of the host."""
    lines = [f"route add prohibit {cidr}" for cidr in PROHIBITED_RANGES]
    lines += [
        f"route add prohibit {address}/32"
        for address in _host_addresses()
        if not ipaddress.ip_address(address).is_loopback
    ]
    for host, ports in _registry_endpoints(reachable_hosts):
        for address in _resolve(host):
            if ipaddress.ip_address(address).is_private:
                lines.append(f"route replace {address}/32 via {SLIRP_GATEWAY} dev tap0 table {REGISTRY_TABLE}")
                lines += [
                    f"rule add to {address}/32 ipproto tcp dport {port} table {REGISTRY_TABLE} priority {REGISTRY_RULE}"
                    for port in ports
                ]
    return list(dict.fromkeys(lines))


def _registry_endpoints(reachable_hosts: tuple[str, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """(host, ports) for each registry: "host:port" names its port, a bare host means HTTPS and HTTP."""
    endpoints = []
    for entry in reachable_hosts:
        host, _, port = entry.rpartition(":") if entry.rpartition(":")[2].isdigit() else (entry, "", "")
        endpoints.append((host, (int(port),) if port else (443, 80)))
    return endpoints


def _host_addresses() -> list[str]:
    try:
        shown = subprocess.run(
            [tool("ip"), "-json", "-4", "addr"], capture_output=True, text=True, timeout=10, env={"PATH": SYSTEM_PATH}
        )
        return [info["local"] for link in json.loads(shown.stdout) for info in link.get("addr_info", [])]
    except (OSError, ValueError, subprocess.SubprocessError):
        return []


def _resolve(host: str) -> list[str]:
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(host, 443, socket.AF_INET, socket.SOCK_STREAM)})
    except OSError:
        return []


def _make_root(settings: SandboxSettings, label: str) -> Path:
    """The sandbox's folder on the worker's side; traversable (not listable) by the sandbox's uid. The worker's
    pid in its name lets a sweep at start-up find the folders of dead workers."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)[:40]
    root = Path(tempfile.mkdtemp(prefix=f"stackbench_sandbox_{os.getpid()}_{safe}_", dir=settings.scratch_dir))
    root.chmod(0o711)
    return root.resolve()


def _printed(process: subprocess.Popen) -> str:
    """The end of what a failed launch printed on stderr."""
    return process.stderr.read().decode("utf-8", "replace")[-500:].strip()


def _seccomp_pipe() -> int:
    """A pipe bubblewrap reads the seccomp filter from (the read end; it is small enough to fit)."""
    read, write = os.pipe()
    try:
        os.write(write, seccomp_filter.program())
    finally:
        os.close(write)
    return read


def _read_info(fd: int) -> dict:
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


def _processes_in(namespace: int) -> list[int]:
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


def _first_child(pid: int) -> int:
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


def reachable_by_anyone(path: Path, execute: bool = False) -> bool:
    """Whether a user with no rights of its own (a sandbox's user) can reach the file or folder (every folder on
    its way can be entered by others) and read it, or with execute, run it."""
    try:
        real = path.resolve(strict=True)
        needed = stat.S_IXOTH if execute or real.is_dir() else stat.S_IROTH
        return bool(real.stat().st_mode & needed) and all(p.stat().st_mode & stat.S_IXOTH for p in real.parents)
    except OSError:
        return False


def sweep_leftovers(scratch_dir: str | None = None):
    """Remove the folders of sandboxes (and Claude workspaces, and ready-made virtualenv copies) whose worker died,
    and end every process still working in one. A sandbox's own processes die with its worker (its init and
    network do), but a process started outside a PID namespace (an unconfined run, the Claude CLI's commands)
    lives on until swept. Only real folders of this worker's user are swept: a link named like one is left alone
    (following it would end processes and remove files wherever it points)."""
    folder = Path(scratch_dir or tempfile.gettempdir()).resolve()  # the configured place; what is in it is not
    for root in folder.glob("stackbench_sandbox_*"):
        owner = root.name.split("_")[2]
        try:
            info = root.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            kill_processes_working_in(root)
            shutil.rmtree(root, ignore_errors=True)


def kill_processes_working_in(folder: Path):
    """End every process whose working folder lies in folder (a real folder, given as it is: never resolved)."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            working_in = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if working_in.is_relative_to(folder) and int(entry.name) != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
