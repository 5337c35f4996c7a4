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

This module is the sandbox as its callers hold it: Sandbox, UnconfinedSandbox (the weaker jail, which shares its
interface and most of its code) and open_sandbox, which chooses between them. That one class with its subclass
passes 500 lines; splitting them would leave open_sandbox and the subclass importing each other. What they are
made of lives beside them: settings (what a sandbox is made with), reader (the newcomer inside), prerequisites,
launch, network, processes, host_view, seccomp_filter, cgroups, files and venv_copies; watch says when a running
command must stop, and leftovers sweeps what dead workers left.
"""

import contextlib
import errno
import fcntl
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any, BinaryIO
from urllib.parse import urlsplit

from stackbench.sandbox import host_view
from stackbench.sandbox.capture import read_capped
from stackbench.sandbox.cgroups import Cgroups
from stackbench.sandbox.files import Planted, SandboxFiles, copy_tree, tree_usage
from stackbench.sandbox.host_view import reachable_by_anyone
from stackbench.sandbox.launch import (
    LAUNCH,
    NAMESPACE_FDS,
    NICENESS,
    NS_GET_USERNS,
    RESTORE_STDERR,
    START_TIMEOUT,
    first_child,
    printed,
    read_info,
    seccomp_pipe,
)
from stackbench.sandbox.network import SLIRP_DNS, Network
from stackbench.sandbox.prerequisites import SandboxUnavailable, bubblewrap_problem, tool
from stackbench.sandbox.processes import Spawned, kill_group, strays_gone
from stackbench.sandbox.reader import HOME, READER_UID, STATE, SYSTEM_PATH, TOOLS, VENV, WORK, reader_environment
from stackbench.sandbox.settings import SandboxSettings
from stackbench.sandbox.venv_copies import VenvCopy, keep_template, new_sandbox_uid, release, take_copy, template_folder

# A command's standard stream, as Popen takes it: PIPE, DEVNULL or STDOUT, a file, or None for the worker's own.
Redirect = int | IO[Any] | None


def open_sandbox(
    settings: SandboxSettings,
    label: str,
    work_dir: Path | None = None,
    read_only: list[Path] | None = None,
    prepared_venv: Path | None = None,
) -> "Sandbox":
    """A started sandbox: confined with bubblewrap, or unconfined when the settings say so explicitly. read_only
    lists host folders shown read-only inside (wheel folders to install from); sandbox.read_only says where.
    prepared_venv is a virtualenv the worker keeps (one prepared with a library): the reader's starts as a private
    copy of it instead of the template (in a confined sandbox; an unconfined one makes its own)."""
    secret = credential_in(settings.environment)
    if secret:
        raise SandboxUnavailable(
            f"{secret} carries a user name or password, and commands taken from docs could read it: give the "
            "sandbox a registry or proxy that needs none, or keep the variable out of the worker's environment"
        )
    if settings.unconfined:
        return UnconfinedSandbox(settings, label, work_dir, read_only)
    return Sandbox(settings, label, work_dir, read_only, prepared_venv)


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
        self,
        settings: SandboxSettings,
        label: str,
        work_dir: Path | None = None,
        read_only: list[Path] | None = None,
        prepared_venv: Path | None = None,
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
        self._files: SandboxFiles | None = None  # None until set up, so close() knows what there is to copy back
        self._fds: dict[str, int] = {}
        self._init: subprocess.Popen[bytes] | None = None
        self._network = Network()
        try:
            venv = self._take_venv_copy(prepared_venv)
            self.uid = venv.uid if venv and venv.uid is not None else new_sandbox_uid() if self.is_root else os.getuid()
            self.gid = self.uid if self.is_root else os.getgid()
            self._files = SandboxFiles(
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
    def files(self) -> SandboxFiles:
        """The sandbox's folders as the worker may touch them."""
        assert self._files is not None, "set up by __init__, before anyone holds the sandbox"
        return self._files

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
        stdin: Redirect = None,
        stdout: Redirect = None,
        stderr: Redirect = None,
        pass_fds: tuple[int, ...] = (),
    ) -> Spawned:
        """Start argv inside the sandbox in a session of its own, with env as its whole environment."""
        if self._init is None or self._init.poll() is not None:
            self._start()
        info_read, info_write = os.pipe()
        filter_fd = seccomp_pipe()
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
            pid = read_info(info_read)["child-pid"]
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
        env: dict[str, str] | None = None,
        input: bytes | None = None,
        output_limit: int = 1024**2,
    ) -> subprocess.CompletedProcess[str]:
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

    def kill_processes(self, wait: bool = True) -> None:
        """End every process of the sandbox: its PID namespace goes with its init. The next spawn starts a new
        init (same folders, fresh processes and network). With wait, return once the process count is back to
        zero (a flood's processes stay charged until the machine's init reaps them)."""
        if self._init is not None:
            kill_group(self._init.pid)
            self._init.wait()
            self._init = None
        self._network.stop()
        self.cgroups.kill_all(wait=wait)
        for name in NAMESPACE_FDS:
            fd = self._fds.pop(name, None)
            if fd is not None:
                os.close(fd)

    def kill_strays(self, keep: Iterable[int] = ()) -> None:
        """End whatever a finished command left running behind it. Without keep, leftovers (a daemon, a detached
        fork bomb) take the whole process tree with them: the sandbox's processes start afresh, its files stay.
        With keep (host pids of processes that must live on, such as a page runner), the others are killed one by
        one; if they outrun that, everything goes."""
        if self._init is None or "pid" not in self._fds:
            return
        kept = {self._init.pid, *self._init_pids, *keep}
        namespace = os.fstat(self._fds["pid"]).st_ino
        if not strays_gone(namespace, kept, one_by_one=bool(keep)):
            self.kill_processes()

    def keep_venv(self, target: Path) -> None:
        """Keep the reader's virtualenv as it is now as target, the worker's own (for later sandboxes to start
        from a copy of); call it only while nothing of the run's is running."""
        keep_template(self.root / "home" / ".venv", target)

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
    def write_file(self, inside: str, text: str, append: bool = False) -> None:
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

    def describe(self) -> dict[str, str]:
        return {
            "confinement": self.confinement,
            **self.settings.profile.describe(),
            "limits": f"{self.limits.max_processes} processes, {self.limits.memory_bytes // 1024**2} MB memory, "
            f"{self.limits.disk_bytes // 1024**2} MB disk, {self.limits.max_files:,} files"
            + (f", {self.limits.cpus:g} CPU" if self.cgroups.cpu is not None else ""),
            "cgroups": ", ".join(self.cgroups.describe()) or "none (rlimits only)",
        }

    def close(self) -> None:
        if not self.root.exists():
            return
        self.kill_processes(wait=False)
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
        self.cgroups.remove_when_empty()
        if self._chosen is not None and self._files is not None:
            # Copied back by descriptor, following no link on either side: a run that made its work folder (or
            # anything in it) a link to a host folder gets nothing of that folder out, and no file of the chosen
            # folder is written through a link an earlier run left there.
            info = self._chosen.stat()
            with contextlib.suppress(OSError):
                copy_tree(self.root / "home", "work", self._chosen, (info.st_uid, info.st_gid))
        shutil.rmtree(self.root, ignore_errors=True)

    # -- setting up ----------------------------------------------------------------------------------------------
    def _prepare_folders(self, venv: VenvCopy | None) -> None:
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
        # The machine's own name too, as every system lists it: a program that looks itself up (a JVM finding its
        # local address) finds it, as on the reader's machine.
        (etc / "hosts").write_text(
            f"127.0.0.1\tlocalhost\n127.0.1.1\t{socket.gethostname()}\n::1\tlocalhost ip6-localhost ip6-loopback\n"
        )
        (etc / "empty").touch(mode=0o444)
        if self._owner is not None:
            for name in ("home", "home/work", "home/.npm-global", "home/.npm-global/bin", "tmp", "state"):
                os.chown(self.root / name, *self._owner, follow_symlinks=False)
        etc.chmod(0o755)

    def _open_mount_sources(self) -> None:
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

    def _start(self) -> None:
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
            reaper = read_info(info_read)["child-pid"]
        except (ValueError, KeyError):
            kill_group(self._init.pid)
            self._init.wait(timeout=START_TIMEOUT)
            raise SandboxUnavailable(f"bubblewrap could not start the sandbox: {printed(self._init)}") from None
        try:
            command_pid = first_child(reaper)
        except SandboxUnavailable:
            kill_group(self._init.pid)
            self._init.wait(timeout=START_TIMEOUT)
            raise SandboxUnavailable(f"the sandbox's init did not start: {printed(self._init)}") from None
        self._init_pids = (reaper, command_pid)
        self._fds["pid"] = os.open(f"/proc/{reaper}/ns/pid", os.O_RDONLY)
        self._fds["net"] = os.open(f"/proc/{reaper}/ns/net", os.O_RDONLY)
        self._fds["owner"] = fcntl.ioctl(self._fds["pid"], NS_GET_USERNS)
        self._fds["user"] = os.open(f"/proc/{command_pid}/ns/user", os.O_RDONLY)
        if self.settings.profile.network == "registries":
            self._network.start(self._fds["owner"], self._fds["net"], self._owner, self.settings.reachable_hosts)

    def _take_venv_copy(self, prepared: Path | None) -> VenvCopy | None:
        """The reader's own virtualenv, first on PATH: a private copy of the prepared one if given, else of the
        template for this Python (None until there is a template; the first sandbox makes it)."""
        template = prepared or self._template()
        if template is None or not template.is_dir():
            return None
        return take_copy(template, self.root.parent, self.is_root)

    def _template(self) -> Path | None:
        profile = self.settings.profile
        return template_folder(
            self.settings.templates_dir, profile.python, profile.python_version, self.settings.tools.get("uv")
        )

    def _make_venv(self) -> None:
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
        self._files = SandboxFiles(
            {path: Path(path) for path in (self.home, self.state, self.tmp, self.work)}, owner=None
        )
        (self.root / "home" / ".npm-global" / "bin").mkdir(parents=True)
        self.cgroups = Cgroups.create(self.limits.max_processes, self.limits.memory_bytes, self.limits.cpus)
        self._fds = {}
        self._groups: set[int] = set()  # the process groups of the commands it started
        self._init = None
        self._network = Network()
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

    def spawn(
        self,
        argv: list[str],
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stdin: Redirect = None,
        stdout: Redirect = None,
        stderr: Redirect = None,
        pass_fds: tuple[int, ...] = (),
    ) -> Spawned:
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

    def kill_processes(self, wait: bool = True) -> None:
        for group in self._groups:
            kill_group(group)
        self._groups.clear()
        self.cgroups.kill_all(wait=wait)

    def kill_strays(self, keep: Iterable[int] = ()) -> None:
        kept = set(keep)
        for group in [g for g in self._groups if g not in kept]:
            kill_group(group)
            self._groups.discard(group)
        if not kept:
            self.cgroups.kill_all(wait=False)


def _make_root(settings: SandboxSettings, label: str) -> Path:
    """The sandbox's folder on the worker's side; traversable (not listable) by the sandbox's uid. The worker's
    pid in its name lets a sweep at start-up find the folders of dead workers."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)[:40]
    root = Path(tempfile.mkdtemp(prefix=f"stackbench_sandbox_{os.getpid()}_{safe}_", dir=settings.scratch_dir))
    root.chmod(0o711)
    return root.resolve()
