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
import fcntl
import functools
import hashlib
import ipaddress
import json
import os
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

from audits.engines.cgroups import Cgroups

READER_UID = 1000
HOME = "/home/reader"
WORK = f"{HOME}/work"
STATE = "/run/stackbench"
TOOLS = "/run/stackbench-tools"
VENV = f"{HOME}/.venv"
NPM_PREFIX = f"{HOME}/.npm-global"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
# Every sandbox gets an unprivileged uid of its own when the worker is root: files, processes and the per-uid
# process limit of one run are then nobody else's.
SANDBOX_UIDS = (2_000_000_000, 2_140_000_000)  # the kernel refuses uid maps at 2**31 and above
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
NS_GET_USERNS = 0xB701
START_TIMEOUT = 10.0
DISK_CHECK_SECONDS = 2.0
STRAY_ROUNDS = 20  # kill-and-look rounds before a flood of strays ends the whole sandbox
NAMESPACE_FDS = ("pid", "owner", "user", "net")
ATTACH_TO_CGROUPS = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"'


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
        self.disk_checked = self.started

    def interruption(self) -> str | None:
        now = time.monotonic()
        if now - self.started > self.timeout:
            return "timeout"
        if self.should_stop():
            return "cancelled"
        if self.flooded():
            return "process_limit"
        if now - self.disk_checked > DISK_CHECK_SECONDS:
            self.disk_checked = now
            if self.disk_full():
                return "disk_limit"
        return None

    def flooded(self) -> bool:
        return self.sandbox.refused_forks() > self.refused

    def disk_full(self) -> bool:
        limit = self.sandbox.limits.disk_bytes
        return self.sandbox.disk_used(stop_at=limit) > limit


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
    missing = [name for name in ("bwrap", "slirp4netns", "nsenter", "setpriv", "prlimit", "ip") if tool(name) == name]
    if missing:
        return (
            f"{', '.join(missing)} not found: install Debian's bubblewrap, slirp4netns, util-linux and iproute2 "
            "(bin/setup does), or set STACKBENCH_UNCONFINED=1 to run docs' commands with the weaker jail"
        )
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
    if settings.unconfined:
        return UnconfinedSandbox(settings, label, work_dir, read_only)
    return Sandbox(settings, label, work_dir, read_only)


class Sandbox:
    """One run's machine. Paths given to and taken from it are paths inside it (HOME, WORK, STATE);
    host_path() maps them to the worker's side."""

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
        self.root = _make_root(settings, label)
        self.is_root = os.geteuid() == 0
        self.uid = (
            secrets.randbelow(SANDBOX_UIDS[1] - SANDBOX_UIDS[0]) + SANDBOX_UIDS[0] if self.is_root else os.getuid()
        )
        self.gid = self.uid if self.is_root else os.getgid()
        self.home, self.work, self.state, self.tmp = HOME, WORK, STATE, "/tmp"
        self._work_host = self.root / "home" / "work"
        # A folder of the user's choice is copied in, and what the run leaves there copied back at the end (the
        # sandbox's user may not even be able to reach it where it is).
        self._chosen = Path(work_dir).resolve() if work_dir else None
        if self._chosen is not None:
            self._chosen.mkdir(parents=True, exist_ok=True)
            self._chosen_owner = _owner(self._chosen)
        self._prepare_folders()
        self.cgroups = Cgroups.create(self.limits.max_processes, self.limits.memory_bytes)
        self._fds: dict[str, int] = {}
        self._init: subprocess.Popen | None = None
        self._slirp: subprocess.Popen | None = None
        self._slirp_exit: int | None = None
        try:
            self._open_mount_sources()
            self._start()
            self._prepare_toolchain()
        except BaseException:
            self.close()
            raise
        self.start_seconds = time.monotonic() - started

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
        environment = env if env is not None else self.environment
        join = self._join_arguments()
        # bubblewrap hands the namespace descriptors it joined on to the command: close them first (bash, as dash
        # cannot name descriptors above 9).
        closing = " ".join(f"{fd}>&-" for name, fd in self._fds.items() if name in NAMESPACE_FDS)
        command = [
            *self._launcher(network=True),
            tool("bwrap"),
            *join,
            *self._mounts(),
            "--die-with-parent",
            "--new-session",
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
                pass_fds=(*self._fds.values(), info_write, *pass_fds),
                start_new_session=True,
            )
        finally:
            os.close(info_write)
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
        self, argv: list[str], timeout: float, cwd: str | None = None, env: dict | None = None
    ) -> subprocess.CompletedProcess:
        """Run a command to its end inside (for setting the sandbox up); output captured, time limited."""
        spawned = self.spawn(argv, cwd, env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            output, _ = spawned.popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            spawned.kill()
            output, _ = spawned.popen.communicate()
        return subprocess.CompletedProcess(argv, spawned.popen.returncode, output.decode("utf-8", "replace"))

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

    def disk_used(self, stop_at: int | None = None) -> int:
        """Bytes the sandbox's folders take (counting stops once past stop_at)."""
        return _folder_size([self.root], stop_at)

    # -- files ---------------------------------------------------------------------------------------------------
    def host_path(self, inside: str) -> Path | None:
        """Where an inside path is on the worker's side, or None for a path outside the sandbox's own folders."""
        path = os.path.normpath(inside)
        for prefix, host in (
            (WORK, self._work_host),
            (HOME, self.root / "home"),
            (STATE, self.root / "state"),
            ("/tmp", self.root / "tmp"),
        ):
            if path == prefix or path.startswith(prefix + "/"):
                return host / os.path.relpath(path, prefix)
        return None

    def give(self, host_path: Path):
        """Make a file or folder the worker wrote belong to the sandbox's user, so its commands can change it."""
        if not self.is_root:
            return
        targets = [host_path] if not host_path.is_dir() or host_path.is_symlink() else _walk(host_path)
        for target in targets:
            try:
                os.lchown(target, self.uid, self.gid)
            except FileNotFoundError:
                pass

    def write_file(self, inside: str, text: str, append: bool = False) -> Path:
        """Write a file as the reader would (its folders made as needed); returns where it is on the host."""
        target = self.host_path(inside)
        if target is None:
            raise OSError(f"{inside} is outside the sandbox's folders")
        missing = [parent for parent in reversed(target.parents) if not parent.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a" if append else "w", encoding="utf-8") as out:
            out.write(text)
        for made in [*missing, target]:
            self.give(made)
        return target

    def describe(self) -> dict:
        return {
            "confinement": self.confinement,
            **self.settings.profile.describe(),
            "limits": f"{self.limits.max_processes} processes, {self.limits.memory_bytes // 1024**2} MB memory, "
            f"{self.limits.disk_bytes // 1024**2} MB disk",
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
        if self._chosen is not None:
            subprocess.run([tool("cp"), "-a", f"{self._work_host}/.", str(self._chosen)], timeout=600)
            _chown_tree(self._chosen, *self._chosen_owner)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- setting up ----------------------------------------------------------------------------------------------
    def _prepare_folders(self):
        for name in ("home", "tmp", "state", "etc"):
            (self.root / name).mkdir()
        self._work_host.mkdir(parents=True)
        if self._chosen is not None:
            subprocess.run([tool("cp"), "-a", f"{self._chosen}/.", str(self._work_host)], check=True, timeout=600)
            self.give(self._work_host)
        (self.root / "home" / ".npm-global" / "bin").mkdir(parents=True)
        etc = self.root / "etc"
        (etc / "passwd").write_text(
            f"root:x:0:0:root:/root:/bin/sh\nreader:x:{READER_UID}:{READER_UID}:Reader:{HOME}:"
            "/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        )
        (etc / "group").write_text(f"root:x:0:\nreader:x:{READER_UID}:\nnogroup:x:65534:\n")
        (etc / "resolv.conf").write_text(f"nameserver {SLIRP_DNS}\n")
        (etc / "hosts").write_text("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
        for path in (self.root / "home", self.root / "tmp", self.root / "state", self._work_host):
            self.give(path)
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
        mounts = ["--ro-bind", "/", "/"]
        hidden = [Path(path) for path in self.settings.hidden_paths if Path(path).is_dir() and path != "/"]
        if self.is_root:
            # Behind a folder others cannot enter, the reader could not get there anyway (and bubblewrap, as the
            # reader, cannot make the mount point).
            hidden = [path for path in hidden if reachable_by_anyone(path.resolve().parent)]
        for path in hidden:
            # A folder inside another hidden one is gone with it.
            if not any(path != other and path.is_relative_to(other) for other in hidden):
                mounts += ["--tmpfs", str(path), "--remount-ro", str(path)]
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

    def _launcher(self, network: bool) -> list[str]:
        """What every process of the sandbox starts through: its cgroups, its rlimits, its network, its uid."""
        prefix = []
        if self.cgroups.procs_files:
            prefix += ["/bin/sh", "-c", ATTACH_TO_CGROUPS, "sh", *self.cgroups.procs_files, "--"]
        limits = [f"--data={self.limits.memory_bytes}", f"--fsize={self.limits.file_size_bytes}", "--core=0"]
        if self.is_root and self.cgroups.pids is None:
            # Without a pids cgroup, the per-uid count caps a fork bomb (the sandbox's uid is its own). With one, the
            # cgroup refuses first, and counts what it refused.
            limits.append(f"--nproc={self.limits.max_processes}")
        prefix += [tool("prlimit"), *limits, "--"]
        if network:
            prefix += [tool("nsenter"), f"--net=/proc/self/fd/{self._fds['net']}", "--"]
        drop = ["--reuid", str(self.uid), "--regid", str(self.gid), "--clear-groups"] if self.is_root else []
        return [*prefix, tool("setpriv"), *drop, "--no-new-privs", "--", tool("env"), "-i", "--"]

    def _join_arguments(self) -> list[str]:
        # bubblewrap makes two user namespaces (the first maps root, for /dev/pts): the PID namespace belongs to
        # the first, the commands run in the second.
        fd = self._fds
        if os.fstat(fd["owner"]).st_ino == os.fstat(fd["user"]).st_ino:
            users = ["--userns", str(fd["user"]), "--uid", str(READER_UID), "--gid", str(READER_UID)]
        else:
            users = ["--userns", str(fd["owner"]), "--userns2", str(fd["user"]), "--uid", "0", "--gid", "0"]
        return [*users, "--pidns", str(fd["pid"])]

    def _start(self):
        """Start the sandbox's init (which holds its namespaces) and its network."""
        info_read, info_write = os.pipe()
        command = [
            *self._launcher(network=False),
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
        mount_fds = tuple(value for name, value in self._fds.items() if name not in NAMESPACE_FDS)
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
            raise SandboxUnavailable(
                f"bubblewrap could not start the sandbox: {self._init.stderr.read().decode()[-500:]}"
            ) from None
        try:
            command_pid = _first_child(reaper)
        except SandboxUnavailable:
            kill_group(self._init.pid)
            self._init.wait(timeout=START_TIMEOUT)
            raise SandboxUnavailable(
                "the sandbox's init did not start: " + self._init.stderr.read().decode("utf-8", "replace")[-500:]
            ) from None
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
            self._slirp = subprocess.Popen(
                [
                    *drop,
                    tool("slirp4netns"),
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
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
                reason = self._slirp.stderr.read().decode("utf-8", "replace")[-500:]
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

    def _prepare_toolchain(self):
        """The reader's own virtualenv, first on PATH: copied from a template made once per Python."""
        template = _template_folder(self.settings)
        venv = self.root / "home" / ".venv"
        if template is not None and template.is_dir():
            # Hard links cost no copying; the files stay the worker's (the reader cannot change them in place, only
            # replace them, as pip does), the folders become the reader's.
            same_disk = template.stat().st_dev == venv.parent.stat().st_dev
            subprocess.run(
                [tool("cp"), "-al" if same_disk else "-a", str(template), str(venv)], check=True, timeout=120
            )
            if self.is_root:
                for folder in _walk_folders(venv) if same_disk else _walk(venv):
                    os.lchown(folder, self.uid, self.gid)
            return
        made = self.run(self._venv_command(), timeout=300, cwd=HOME)
        if made.returncode != 0:
            raise SandboxUnavailable(f"the reader's virtualenv could not be made: {made.stdout.strip()[-800:]}")
        if template is not None:
            _keep_template(venv, template)

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
        self._work_host = Path(work_dir).resolve() if work_dir else self.root / "home" / "work"
        self._chosen = None
        self.home, self.work = str(self.root / "home"), str(self._work_host)
        self.state, self.tmp = str(self.root / "state"), str(self.root / "tmp")
        for name in ("home", "tmp", "state"):
            (self.root / name).mkdir()
        self._work_host.mkdir(parents=True, exist_ok=True)
        (self.root / "home" / ".npm-global" / "bin").mkdir(parents=True)
        self.cgroups = Cgroups.create(self.limits.max_processes, self.limits.memory_bytes)
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
        prefix = (
            ["/bin/sh", "-c", ATTACH_TO_CGROUPS, "sh", *self.cgroups.procs_files, "--"] if self.cgroups.groups else []
        )
        limits = [f"--data={self.limits.memory_bytes}", f"--fsize={self.limits.file_size_bytes}", "--core=0"]
        popen = subprocess.Popen(
            [*prefix, tool("prlimit"), *limits, "--", *argv],
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

    def host_path(self, inside: str) -> Path | None:
        path = Path(os.path.normpath(inside))
        return path if any(path.is_relative_to(p) for p in (self.root, self._work_host)) else None


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
    """`ip -batch` lines: prohibit the private ranges and the host's own addresses; let registries that resolve
    to a private address through."""
    lines = [f"route add prohibit {cidr}" for cidr in PROHIBITED_RANGES]
    lines += [
        f"route add prohibit {address}/32"
        for address in _host_addresses()
        if not ipaddress.ip_address(address).is_loopback
    ]
    for host in reachable_hosts:
        for address in _resolve(host):
            if ipaddress.ip_address(address).is_private:
                lines.append(f"route replace {address}/32 via {SLIRP_GATEWAY} dev tap0")
    return list(dict.fromkeys(lines))


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


def _walk_folders(folder: Path):
    for parent, _, _ in os.walk(folder):
        yield Path(parent)


def _walk(folder: Path):
    yield folder
    for parent, folders, files in os.walk(folder):
        for name in folders + files:
            yield Path(parent) / name


def _owner(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_uid, info.st_gid


def _chown_tree(folder: Path, uid: int, gid: int):
    for target in _walk(folder):
        try:
            os.lchown(target, uid, gid)
        except OSError:
            pass


def _folder_size(folders: list[Path], stop_at: int | None) -> int:
    total, seen = 0, set()
    stack = [str(folder) for folder in folders]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
        if stop_at is not None and total > stop_at:
            return total
    return total


def _template_folder(settings: SandboxSettings) -> Path | None:
    if not settings.templates_dir:
        return None
    python = Path(settings.profile.python)
    key = f"{python.resolve()}|{settings.profile.python_version}|{os.stat(python.resolve()).st_mtime_ns}"
    tool = settings.tools.get("uv")
    if tool:
        key += f"|{os.stat(tool).st_size}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(settings.templates_dir) / f"venv-{digest}"


def _keep_template(venv: Path, template: Path):
    """Keep a freshly made virtualenv as the template later sandboxes copy (written aside, then renamed, so two
    workers making one at once never leave half of one)."""
    template.parent.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=".venv-", dir=template.parent))
    try:
        subprocess.run([tool("cp"), "-a", str(venv), str(aside / "venv")], check=True, timeout=120)
        _chown_tree(aside / "venv", os.getuid(), os.getgid())
        os.rename(aside / "venv", template)
    except OSError:
        pass  # another worker kept one first
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def sweep_leftovers(scratch_dir: str | None = None):
    """Remove the folders of sandboxes (and Claude workspaces) whose worker died, and end every process still
    working in one. A sandbox's own processes die with its worker (its init and network do), but a process
    started outside a PID namespace (an unconfined run, the Claude CLI's commands) lives on until swept."""
    folder = Path(scratch_dir or tempfile.gettempdir())
    for root in folder.glob("stackbench_sandbox_*"):
        owner = root.name.split("_")[2]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            kill_processes_working_in(root)
            shutil.rmtree(root, ignore_errors=True)


def kill_processes_working_in(folder: Path):
    folder = folder.resolve()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            working_in = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if working_in.is_relative_to(folder) and int(entry.name) != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
