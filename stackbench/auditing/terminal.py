"""A reader's terminal, for following a tutorial: one long-lived bash session (so `cd`, exported variables
and an activated virtualenv carry over), one persistent Python process for the snippets, and background
processes for commands that never end (dev servers). Everything runs in the run's sandbox (see sandbox.py);
paths here are paths inside it."""

import json
import os
import posixpath
import re
import selectors
import shlex
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stackbench.sandbox.capture import OutputCapture, read_capped
from stackbench.sandbox.processes import Spawned
from stackbench.sandbox.sandbox import Sandbox
from stackbench.sandbox.watch import Watch


@dataclass
class CommandResult:
    command: str
    exit_code: int | None
    output: str
    duration: float
    timed_out: bool = False
    cancelled: bool = False
    truncated: bool = False
    names: list[str] = field(default_factory=list)
    process_limit: bool = False
    disk_limit: bool = False
    became_server: bool = False  # run in the foreground, it turned out to be a server (see Terminal.run)

    @property
    def ok(self) -> bool:
        return (
            self.exit_code == 0
            and not self.timed_out
            and not self.cancelled
            and not self.process_limit
            and not self.disk_limit
        )

    def evidence(self, max_lines: int = 40, max_chars: int = 4000) -> str:
        """The command and the tail of its output, for a gap's context."""
        lines = self.output.rstrip("\n").splitlines()
        tail = "\n".join(lines[-max_lines:])[-max_chars:]
        cut = "[...]\n" if len(lines) > max_lines or len(tail) < len("\n".join(lines[-max_lines:])) else ""
        if self.timed_out:
            status = f"timed out after {self.duration:.0f} s"
        elif self.cancelled:
            status = "cancelled"
        elif self.process_limit:
            status = "killed: it reached the sandbox's process limit"
        elif self.disk_limit:
            status = "killed: it filled the sandbox's disk"
        else:
            status = f"exit {self.exit_code} after {self.duration:.2f} s"
        return f"$ {self.command}\n({status})\n{cut}{tail}".rstrip()


class Terminal:
    """What one audit works in: a shell, a Python process and background processes, in one sandbox."""

    def __init__(self, sandbox: Sandbox, should_stop: Callable[[], bool] = lambda: False) -> None:
        self.sandbox = sandbox
        self.limits = sandbox.limits
        self.should_stop = should_stop
        self.env = sandbox.environment
        self.cwd = sandbox.work
        self.shell: Spawned | None = None
        self.python: _PythonProcess | None = None
        self.background: list[tuple[str, int, str]] = []

    def state_file(self, name: str) -> str:
        return f"{self.sandbox.state}/{name}"

    # -- shell -----------------------------------------------------------------------------------------
    def _start_shell(self) -> Spawned:
        # A folder that is a link is the reader's to follow (bubblewrap enters it inside), never the worker's.
        still_there = self.sandbox.files.contains(self.cwd) and self.sandbox.files.kind(self.cwd) in ("folder", "link")
        cwd = self.cwd if still_there else self.sandbox.work
        shell = self.shell = self.sandbox.spawn(
            ["/bin/bash", "--noprofile", "--norc"],
            cwd=cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        restore = self.state_file("env.sh")
        _type_into(shell, f"[ -f {restore} ] && source {restore} 2>/dev/null\n")
        return shell

    def run(self, command: str, timeout: float | None = None, servers: bool = False) -> CommandResult:
        """Run one command in the shell session, as if typed; stdin is /dev/null so prompts get EOF. With
        servers, a command still running after SERVER_SECONDS that has announced a local address is a server,
        whatever its name: it is started again in the background, where it keeps running for the next steps."""
        shell = self.shell
        if shell is None or shell.popen.poll() is not None:
            shell = self._start_shell()
        marker = f"__SB_{uuid.uuid4().hex}"
        watch = Watch(self.sandbox, timeout or self.limits.timeout, self.should_stop)
        script = (
            f"IFS= read -r -d '' __sb_cmd <<'{marker}'\n{command}\n{marker}\n"
            f'eval "$__sb_cmd" </dev/null\n__sb_rc=$?\n'
            f"export -p > {self.state_file('env.sh')}\n"
            f'printf \'\\n{marker}_END %s %s\\n\' "$__sb_rc" "$PWD"\n'
        )
        end = f"\n{marker}_END ".encode()
        try:
            _type_into(shell, script)
        except BrokenPipeError:
            self._start_shell()
            return self.run(command, timeout)
        capture, status, cwd = OutputCapture(self.limits.output_bytes), None, None
        outcome = self._read_until(shell.popen, capture, end, watch, servers)
        if outcome == "server":
            self._kill_shell()
            self.stop_servers()
            started = self.start_background(command)
            note = "[it kept running and announced an address: a server; started again in the background]"
            started.output = f"{capture.text()[0]}\n{note}\n{started.output}"
            started.became_server = True
            started.duration = time.monotonic() - watch.started  # from when it was first typed
            return started
        if outcome == "done":
            recent = bytes(capture.recent)
            position = recent.rfind(end)
            status_line = recent[position + len(end) :].split(b"\n", 1)[0].decode("utf-8", "replace")
            status_text, _, cwd = status_line.partition(" ")
            status = int(status_text) if status_text.lstrip("-").isdigit() else None
            # The marker starts with the newline printed after the command's own output.
            capture.drop_last(len(recent) - position)
        output, truncated = capture.text()
        if outcome == "done" and cwd:
            self.cwd = cwd
        if outcome in ("done", "eof") and watch.flooded():
            outcome = "process_limit"  # it ended, but left a flood of processes behind
        if outcome in ("process_limit", "disk_limit"):
            output += self._contain(outcome)
        elif outcome == "eof":
            status = shell.popen.wait()
            output += "\n[the shell exited; a new one was started in the same folder]"
        elif outcome != "done":
            self._kill_shell()
        return CommandResult(
            command,
            status,
            output,
            time.monotonic() - watch.started,
            timed_out=outcome == "timeout",
            cancelled=outcome == "cancelled",
            truncated=truncated,
            process_limit=outcome == "process_limit",
            disk_limit=outcome == "disk_limit",
        )

    def _read_until(
        self, process: subprocess.Popen[bytes], capture: OutputCapture, end: bytes, watch: Watch, servers: bool = False
    ) -> str:
        assert process.stdout is not None, "the shell's output is a pipe (_start_shell)"
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        fd = process.stdout.fileno()
        try:
            while True:
                stop = watch.interruption()
                if stop:
                    return stop
                if (
                    servers
                    and time.monotonic() - watch.started > SERVER_SECONDS
                    and SERVING.search(bytes(capture.recent).decode("utf-8", "replace"))
                ):
                    return "server"
                if not selector.select(timeout=0.1):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    return "eof"
                capture.add(chunk)
                position = capture.recent.rfind(end)
                if position != -1 and capture.recent.find(b"\n", position + len(end)) != -1:
                    return "done"
        finally:
            selector.close()

    def _contain(self, why: str) -> str:
        """A command that exhausts the process limit (a fork bomb) or fills the disk would break every later step:
        end every process of the sandbox; the next command gets a fresh shell in the same folder with the same
        variables (and, for a full disk, the files the command wrote are left for the reader to see)."""
        if self.python:
            self.python.stop()
            self.python = None
        self.shell = None
        self.background.clear()
        self.sandbox.kill_processes()
        if why == "disk_limit":
            return (
                f"\n[the command filled the sandbox's disk ({self.limits.disk_bytes // 1024**2} MB); every process "
                "of this terminal was killed]"
            )
        return (
            f"\n[the command reached the sandbox's limit of {self.limits.max_processes} processes; every process "
            "of this terminal was killed]"
        )

    def _kill_shell(self) -> None:
        if self.shell is not None:
            self.shell.kill()
            self.shell.popen.wait()
        self.shell = None

    def start_background(self, command: str, settle_seconds: float = 3.0) -> CommandResult:
        """Start a command that never ends (a dev server) in its own process group, and look at it after a
        moment: still running is success; dead with a non-zero status is a failure with its log."""
        index = len(self.background)
        log, status = self.state_file(f"background-{index}.log"), self.state_file(f"background-{index}.status")
        wrapped = f"(\n{command}\n)\necho $? > {status}"
        launch = f'setsid bash -c {shlex.quote(wrapped)} </dev/null >{log} 2>&1 & echo "$!"'
        started = time.monotonic()
        result = self.run(launch, timeout=10)
        pid_text = result.output.strip().splitlines()[-1] if result.output.strip() else ""
        if not result.ok or not pid_text.isdigit():
            return CommandResult(command, result.exit_code, result.output, result.duration)
        pid = int(pid_text)
        self.background.append((command, pid, log))
        deadline = started + settle_seconds
        while time.monotonic() < deadline and not self._newest_server_ended() and not self.should_stop():
            time.sleep(0.1)
        # The log and the status are written inside, so the run could make them anything: they are read without
        # following links, only when regular files, and within bounds.
        output, truncated = self.sandbox.files.read_capped(log, self.limits.output_bytes)
        if not self._newest_server_ended():
            return CommandResult(
                command,
                0,
                output + "\n[still running in the background]",
                time.monotonic() - started,
                truncated=truncated,
            )
        code = self.sandbox.files.read_capped(status, 64)[0].strip()
        return CommandResult(
            command, int(code) if code.isdigit() else 1, output, time.monotonic() - started, truncated=truncated
        )

    def stop_servers(self) -> None:
        """What a reader does before starting the next server: Ctrl-C the ones still running (each is its own
        process group), so a second `npm run dev` finds its port free."""
        if not self.background:
            return
        groups = " ".join(f"-{pid}" for _, pid, _ in self.background)
        self.run(f"kill -TERM -- {groups} 2>/dev/null; sleep 0.5; kill -KILL -- {groups} 2>/dev/null; true", 10)
        self.background.clear()

    def server_log(self) -> str:
        """What the newest background command has printed so far."""
        if not self.background:
            return ""
        output, _ = self.sandbox.files.read_capped(self.background[-1][2], self.limits.output_bytes)
        return output

    def wait_for_url(self, wait_seconds: float) -> str | None:
        """The local URL the newest server announces in its log ("Local: http://localhost:5173/"), waiting up to
        wait_seconds while it starts; None when it announces none or exits."""
        deadline = time.monotonic() + wait_seconds
        while True:
            match = ANNOUNCED_URL.search(self.server_log())
            if match:
                return match.group(0).rstrip(".,;)")
            if time.monotonic() >= deadline or self._newest_server_ended() or self.should_stop():
                return None
            time.sleep(0.2)

    def _newest_server_ended(self) -> bool:
        if not self.background:
            return True
        status = self.background[-1][2].removesuffix(".log") + ".status"
        return self.sandbox.files.kind(status) is not None

    def request(self, url: str, wait_seconds: float = 60.0) -> CommandResult:
        """GET url from inside the sandbox (where the server listens), waiting up to wait_seconds for the port to
        open, as a reader reloads the browser until the dev server is up. Exit 0 for a 2xx/3xx answer, 1 for an
        error status, 7 when nothing ever answered; the output is the status line and the start of the body."""
        script = REQUEST_SCRIPT.format(url=json.dumps(url), wait=wait_seconds)
        result = self.run(f"python3 -c {shlex.quote(script)}", timeout=wait_seconds + 30)
        result.command = f"GET {url}"
        return result

    # -- python ----------------------------------------------------------------------------------------
    def run_python(self, code: str, name: str, timeout: float | None = None, mode: str = "exec") -> CommandResult:
        """Run a snippet in the walkthrough's one Python process, with the interpreter and environment the
        shell would use now (so an activated virtualenv counts)."""
        interpreter, env = self._python_for_shell()
        if self.python is None or not self.python.matches(interpreter, env):
            if self.python:
                self.python.stop()
            self.python = _PythonProcess(self.sandbox, interpreter, env)
        result = self.python.run(
            code,
            name,
            mode,
            self.cwd,
            Watch(self.sandbox, timeout or self.limits.timeout, self.should_stop),
            self.limits.output_bytes,
        )
        if result.process_limit or result.disk_limit:
            result.output += self._contain("process_limit" if result.process_limit else "disk_limit")
        elif result.timed_out or result.cancelled:
            self.python.stop()
            self.python = None
        return result

    def _python_for_shell(self) -> tuple[str, dict[str, str]]:
        env_file = self.state_file("env0")
        probe = self.run(f"command -v python3 || command -v python; env -0 > {env_file}", timeout=10)
        interpreter = probe.output.strip().splitlines()[0] if probe.output.strip() else "python3"
        try:
            raw = self.sandbox.files.read(env_file, ENVIRONMENT_LIMIT).decode("utf-8", "replace")
        except OSError:
            return interpreter, self.env  # not a file the shell wrote: the reader's starting environment
        env = dict(item.split("=", 1) for item in raw.split("\0") if "=" in item)
        return interpreter, env

    # -- files -----------------------------------------------------------------------------------------
    def resolve_inside(self, relative: str) -> str | None:
        """Where `relative` lands from the shell's folder (an inside path), or None if it would leave the reader's
        own folders."""
        relative = relative.replace("~", self.sandbox.home, 1) if relative.startswith("~") else relative
        target = posixpath.normpath(posixpath.join(self.cwd, relative))
        return target if self.sandbox.files.contains(target) else None

    def close(self) -> None:
        if self.python:
            self.python.stop()
        if self.shell and self.shell.popen.poll() is None:
            self._kill_shell()


def _type_into(shell: Spawned, text: str) -> None:
    """Send text to the shell as if typed."""
    assert shell.popen.stdin is not None, "the shell's input is a pipe (_start_shell)"
    shell.popen.stdin.write(text.encode())
    shell.popen.stdin.flush()


ENVIRONMENT_LIMIT = 1024**2  # the reader's variables, dumped by env -0
REPLY_LIMIT = 1024**2  # the Python driver's reply: an error and the names a snippet defined
SERVER_SECONDS = 5.0  # a command still running this long after announcing an address is serving
# What a server prints once it listens: a local address, or the words servers use for it.
SERVING = re.compile(
    r"https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\])(?::\d+)|\b(?:listening|serving|running) (?:on|at)\b|"
    r"\bAvailable on:",
    re.IGNORECASE,
)
ANNOUNCED_URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\])(?::\d+)?/?[^\s\x1b'\"]*")
REQUEST_SCRIPT = """
import ssl, sys, time, urllib.error, urllib.request
url, deadline, last = {url}, time.monotonic() + {wait}, None
url = url.replace("//0.0.0.0", "//127.0.0.1")
# A local HTTPS server serves the certificate the reader just made: they accept it, as a browser lets them.
unverified = ssl._create_unverified_context()
while time.monotonic() < deadline:
    try:
        request = urllib.request.Request(url, headers={{"Accept": "text/html,*/*"}})
        with urllib.request.urlopen(request, timeout=20, context=unverified) as r:
            print("HTTP", r.status)
            print(r.read(20000).decode("utf-8", "replace"))
            sys.exit(0)
    except urllib.error.HTTPError as e:
        print("HTTP", e.code)
        print(e.read(20000).decode("utf-8", "replace"))
        sys.exit(1)
    except OSError as e:
        last = e
        time.sleep(0.5)
print("no answer from", url, "after {wait:.0f} s:", last)
sys.exit(7)
"""


PYTHON_DRIVER = r"""
import ast, asyncio, json, os, sys, traceback
requests = os.fdopen(int(sys.argv[1]), "r")
replies = os.fdopen(int(sys.argv[2]), "w")
sys.stdin = open(os.devnull)
scope = {"__name__": "__main__", "__builtins__": __builtins__}
loop = asyncio.new_event_loop()
for line in requests:
    message = json.loads(line)
    error = None
    try:
        os.chdir(message["cwd"])
        code = compile(message["code"], message["name"], message.get("mode", "exec"), flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        outcome = eval(code, scope)
        if asyncio.iscoroutine(outcome):
            loop.run_until_complete(outcome)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = f"SystemExit: {exc.code}"
    except BaseException as exc:
        error = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next))
        sys.stderr.write(error)
    sys.stdout.flush()
    sys.stderr.flush()
    names = sorted(k for k in scope if not k.startswith("__"))
    replies.write(json.dumps({"error": error, "names": names}) + "\n")
    replies.flush()
"""


class _PythonProcess:
    def __init__(self, sandbox: Sandbox, interpreter: str, env: dict[str, str]) -> None:
        self.sandbox, self.interpreter, self.env = sandbox, interpreter, env
        # What the snippets print goes to a file of the worker's, out of the sandbox's reach: read back, it is
        # only ever what they printed.
        self.log = sandbox.private_file("python")
        request_read, self.request_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        self.process = sandbox.spawn(
            [interpreter, "-u", "-c", PYTHON_DRIVER, str(request_read), str(reply_write)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            pass_fds=(request_read, reply_write),
        )
        os.close(request_read)
        os.close(reply_write)
        self.requests = os.fdopen(self.request_write, "w")

    def matches(self, interpreter: str, env: dict[str, str]) -> bool:
        return self.process.popen.poll() is None and interpreter == self.interpreter and env == self.env

    def run(self, code: str, name: str, mode: str, cwd: str, watch: Watch, limit: int) -> CommandResult:
        offset = os.fstat(self.log.fileno()).st_size
        try:
            self.requests.write(json.dumps({"code": code, "name": name, "mode": mode, "cwd": cwd}) + "\n")
            self.requests.flush()
        except BrokenPipeError:
            return CommandResult(code, 1, "the Python process ended unexpectedly", 0.0)
        reply, outcome = self._await_reply(watch)
        if outcome == "done" and watch.flooded():
            outcome = "process_limit"  # it ended, but left a flood of processes behind
        output, truncated = read_capped(self.log.fileno(), limit, offset)
        duration = time.monotonic() - watch.started
        if outcome != "done":
            return CommandResult(
                code,
                None,
                output,
                duration,
                timed_out=outcome == "timeout",
                cancelled=outcome == "cancelled",
                truncated=truncated,
                process_limit=outcome == "process_limit",
                disk_limit=outcome == "disk_limit",
            )
        failed = reply is None or reply["error"] is not None
        names = reply["names"] if reply else []
        return CommandResult(code, 1 if failed else 0, output, duration, truncated=truncated, names=names)

    def _await_reply(self, watch: Watch) -> tuple[dict[str, Any] | None, str]:
        selector = selectors.DefaultSelector()
        selector.register(self.reply_read, selectors.EVENT_READ)
        buffer = b""
        try:
            while True:
                stop = watch.interruption()
                if stop:
                    return None, stop
                if not selector.select(timeout=0.1):
                    continue
                chunk = os.read(self.reply_read, 65536)
                if not chunk:
                    return None, "done"
                buffer += chunk
                if len(buffer) > REPLY_LIMIT:
                    return None, "done"  # the snippet wrote to the driver's pipe: no reply, a failure
                if buffer.endswith(b"\n"):
                    return json.loads(buffer), "done"
        finally:
            selector.close()

    def stop(self) -> None:
        self.process.kill()
        self.process.popen.wait()
        for closing in (self.requests.close, lambda: os.close(self.reply_read), self.log.close):
            try:
                closing()
            except OSError:
                pass
