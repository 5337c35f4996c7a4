"""A reader's terminal, for following a tutorial: one long-lived bash session (so `cd`, exported variables
and an activated virtualenv carry over), one persistent Python process for the snippets, and background
processes for commands that never end (dev servers). Everything runs in a sandbox (see sandbox.py)."""

import json
import os
import selectors
import shlex
import subprocess
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from audits.engines.sandbox import Limits, ProcessJail, cap_output, head_and_tail, kill_group, sandbox_env


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

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.cancelled and not self.process_limit

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
        else:
            status = f"exit {self.exit_code} after {self.duration:.2f} s"
        return f"$ {self.command}\n({status})\n{cut}{tail}".rstrip()


class _Capture:
    """Keeps the head and a rolling tail of a stream, so a flood of output costs bounded memory."""

    def __init__(self, limit: int):
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.recent = bytearray()
        self.total = 0

    def add(self, chunk: bytes):
        self.total += len(chunk)
        self.recent += chunk
        del self.recent[: max(0, len(self.recent) - 8192)]
        room = self.limit // 4 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > 2 * self.limit:
            del self.tail[: len(self.tail) - self.limit]

    def drop_last(self, count: int):
        """Forget the last count bytes (the end marker the shell printed)."""
        self.total -= count
        from_tail = min(count, len(self.tail))
        del self.tail[len(self.tail) - from_tail :]
        del self.head[len(self.head) - (count - from_tail) :]

    def text(self) -> tuple[str, bool]:
        if self.total <= len(self.head) + len(self.tail):
            return cap_output(bytes(self.head + self.tail), self.limit)
        tail = bytes(self.tail[-(self.limit - len(self.head)) :])
        cut = self.total - len(self.head) - len(tail)
        return head_and_tail(bytes(self.head), tail, cut), True


class Terminal:
    """The sandbox one audit works in: a shell, a Python process and background processes."""

    def __init__(
        self,
        work_dir: Path,
        home: Path,
        state_dir: Path,
        limits: Limits,
        should_stop: Callable[[], bool] = lambda: False,
    ):
        self.work_dir, self.home, self.state_dir = Path(work_dir), Path(home), Path(state_dir)
        for folder in (self.work_dir, self.home, self.state_dir):
            folder.mkdir(parents=True, exist_ok=True)
        self.limits = limits
        self.should_stop = should_stop
        self.env = sandbox_env(self.home, limits)
        self.jail = ProcessJail(limits, self.work_dir)
        self.cwd = self.work_dir
        self.shell: subprocess.Popen | None = None
        self.python: _PythonProcess | None = None
        self.background: list[tuple[str, int, Path]] = []

    # -- shell -----------------------------------------------------------------------------------------
    def _start_shell(self):
        self.shell = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self.cwd,
            env=self.env,
            preexec_fn=self.jail.preexec,
        )
        self.jail.track(self.shell.pid)
        restore = self.state_dir / "env.sh"
        if restore.exists():
            self.shell.stdin.write(f"source {shlex.quote(str(restore))} 2>/dev/null\n".encode())
            self.shell.stdin.flush()

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run one command in the shell session, as if typed; stdin is /dev/null so prompts get EOF."""
        if self.shell is None or self.shell.poll() is not None:
            self._start_shell()
        token = uuid.uuid4().hex
        marker = f"__SB_{token}"
        hits = self.jail.limit_hits()
        script = (
            f"IFS= read -r -d '' __sb_cmd <<'{marker}'\n{command}\n{marker}\n"
            f'eval "$__sb_cmd" </dev/null\n__sb_rc=$?\n'
            f"export -p > {shlex.quote(str(self.state_dir / 'env.sh'))}\n"
            f'printf \'\\n{marker}_END %s %s\\n\' "$__sb_rc" "$PWD"\n'
        )
        end = f"\n{marker}_END ".encode()
        started = time.monotonic()
        try:
            self.shell.stdin.write(script.encode())
            self.shell.stdin.flush()
        except BrokenPipeError:
            self._start_shell()
            return self.run(command, timeout)
        capture, status, cwd = _Capture(self.limits.output_bytes), None, None
        outcome = self._read_until(self.shell, capture, end, started, timeout or self.limits.timeout, hits)
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
            self.cwd = Path(cwd)
        if outcome in ("done", "eof") and self.jail.limit_hits() > hits:
            outcome = "process_limit"  # it ended, but left a flood of processes behind
        if outcome == "process_limit":
            output += self._contain_process_flood()
        elif outcome == "eof":
            status = self.shell.wait()
            output += "\n[the shell exited; a new one was started in the same folder]"
        elif outcome != "done":
            self._kill_shell()
        return CommandResult(
            command,
            status,
            output,
            time.monotonic() - started,
            timed_out=outcome == "timeout",
            cancelled=outcome == "cancelled",
            truncated=truncated,
            process_limit=outcome == "process_limit",
        )

    def _read_until(self, process, capture: _Capture, end: bytes, started: float, timeout: float, hits: int) -> str:
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        fd = process.stdout.fileno()
        try:
            while True:
                stop = interruption(started, timeout, self.should_stop, self.jail, hits)
                if stop:
                    return stop
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

    def _contain_process_flood(self) -> str:
        """A command that exhausts the process limit (a fork bomb) would starve every later step: kill everything
        this terminal runs; the next command gets a fresh shell in the same folder with the same variables."""
        if self.python:
            self.python.stop()
            self.python = None
        if self.shell:
            self._kill_shell()
        self.background.clear()
        self.jail.kill_all()
        return (
            f"\n[the command reached the sandbox's limit of {self.limits.max_processes} processes; every process "
            "of this terminal was killed]"
        )

    def _kill_shell(self):
        kill_group(self.shell.pid)
        self.shell.wait()
        self.shell = None

    def start_background(self, command: str, settle_seconds: float = 3.0) -> CommandResult:
        """Start a command that never ends (a dev server) in its own process group, and look at it after a
        moment: still running is success; dead with a non-zero status is a failure with its log."""
        index = len(self.background)
        log = self.state_dir / f"background-{index}.log"
        launch = f'setsid bash -c {shlex.quote(command)} </dev/null >{shlex.quote(str(log))} 2>&1 & echo "$!"'
        started = time.monotonic()
        result = self.run(launch, timeout=10)
        pid_text = result.output.strip().splitlines()[-1] if result.output.strip() else ""
        if not result.ok or not pid_text.isdigit():
            return CommandResult(command, result.exit_code, result.output, result.duration)
        pid = int(pid_text)
        self.jail.track(pid)
        self.background.append((command, pid, log))
        deadline = started + settle_seconds
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.1)
        output, truncated = cap_output(log.read_bytes() if log.exists() else b"", self.limits.output_bytes)
        if _alive(pid):
            return CommandResult(
                command,
                0,
                output + "\n[still running in the background]",
                time.monotonic() - started,
                truncated=truncated,
            )
        exit_check = self.run(f"wait {pid} 2>/dev/null; echo $?", timeout=5)
        code = exit_check.output.strip().splitlines()[-1] if exit_check.output.strip() else "1"
        return CommandResult(
            command, int(code) if code.isdigit() else 1, output, time.monotonic() - started, truncated=truncated
        )

    # -- python ----------------------------------------------------------------------------------------
    def run_python(self, code: str, name: str, timeout: float | None = None) -> CommandResult:
        """Run a snippet in the walkthrough's one Python process, with the interpreter and environment the
        shell would use now (so an activated virtualenv counts)."""
        interpreter, env = self._python_for_shell()
        if self.python is None or not self.python.matches(interpreter, env):
            if self.python:
                self.python.stop()
            self.python = _PythonProcess(interpreter, env, self.state_dir, self.jail)
        result = self.python.run(
            code, name, self.cwd, timeout or self.limits.timeout, self.limits.output_bytes, self.should_stop
        )
        if result.process_limit:
            result.output += self._contain_process_flood()
        elif result.timed_out or result.cancelled:
            self.python.stop()
            self.python = None
        return result

    def _python_for_shell(self) -> tuple[str, dict[str, str]]:
        env_file = self.state_dir / "env0"
        probe = self.run(f"command -v python3 || command -v python; env -0 > {shlex.quote(str(env_file))}", timeout=10)
        interpreter = probe.output.strip().splitlines()[0] if probe.output.strip() else "python3"
        env = dict(
            item.split("=", 1) for item in env_file.read_bytes().decode("utf-8", "replace").split("\0") if "=" in item
        )
        return interpreter, env

    # -- files -----------------------------------------------------------------------------------------
    def resolve_inside(self, relative: str) -> Path | None:
        """Where `relative` lands from the shell's folder, or None if it would leave the work folder."""
        target = Path(os.path.normpath(self.cwd / Path(relative).expanduser()))
        return target if target.is_relative_to(self.work_dir) else None

    def close(self):
        if self.python:
            self.python.stop()
        if self.shell and self.shell.poll() is None:
            self._kill_shell()
        self.jail.close()


def interruption(
    started: float, timeout: float, should_stop: Callable[[], bool], jail: ProcessJail, hits: int
) -> str | None:
    """Why a running command must stop now, if it must: out of time, cancelled, or forking past the limit."""
    if time.monotonic() - started > timeout:
        return "timeout"
    if should_stop():
        return "cancelled"
    if jail.limit_hits() > hits:
        return "process_limit"
    return None


def _alive(pid: int) -> bool:
    try:
        finished, _ = os.waitpid(pid, os.WNOHANG)
        return finished == 0
    except ChildProcessError:
        try:
            os.kill(pid, 0)
            return not Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")
        except (ProcessLookupError, OSError):
            return False


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
        code = compile(message["code"], message["name"], "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
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
    def __init__(self, interpreter: str, env: dict[str, str], state_dir: Path, jail: ProcessJail):
        self.interpreter, self.env, self.jail = interpreter, env, jail
        self.log = state_dir / f"python-{uuid.uuid4().hex[:8]}.log"
        request_read, self.request_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [interpreter, "-u", "-c", PYTHON_DRIVER, str(request_read), str(reply_write)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                pass_fds=(request_read, reply_write),
                preexec_fn=jail.preexec,
            )
        os.close(request_read)
        os.close(reply_write)
        jail.track(self.process.pid)
        self.requests = os.fdopen(self.request_write, "w")

    def matches(self, interpreter: str, env: dict[str, str]) -> bool:
        return self.process.poll() is None and interpreter == self.interpreter and env == self.env

    def run(self, code: str, name: str, cwd: Path, timeout: float, limit: int, should_stop) -> CommandResult:
        offset = self.log.stat().st_size
        started, hits = time.monotonic(), self.jail.limit_hits()
        try:
            self.requests.write(json.dumps({"code": code, "name": name, "cwd": str(cwd)}) + "\n")
            self.requests.flush()
        except BrokenPipeError:
            return CommandResult(code, 1, "the Python process ended unexpectedly", 0.0)
        reply, outcome = self._await_reply(started, timeout, should_stop, hits)
        if outcome == "done" and self.jail.limit_hits() > hits:
            outcome = "process_limit"  # it ended, but left a flood of processes behind
        with open(self.log, "rb") as log:
            log.seek(offset)
            output, truncated = cap_output(log.read(), limit)
        if outcome != "done":
            return CommandResult(
                code,
                None,
                output,
                time.monotonic() - started,
                timed_out=outcome == "timeout",
                cancelled=outcome == "cancelled",
                truncated=truncated,
                process_limit=outcome == "process_limit",
            )
        failed = reply is None or reply["error"] is not None
        names = reply["names"] if reply else []
        return CommandResult(
            code, 1 if failed else 0, output, time.monotonic() - started, truncated=truncated, names=names
        )

    def _await_reply(self, started, timeout, should_stop, hits):
        selector = selectors.DefaultSelector()
        selector.register(self.reply_read, selectors.EVENT_READ)
        buffer = b""
        try:
            while True:
                stop = interruption(started, timeout, should_stop, self.jail, hits)
                if stop:
                    return None, stop
                if not selector.select(timeout=0.1):
                    continue
                chunk = os.read(self.reply_read, 65536)
                if not chunk:
                    return None, "done"
                buffer += chunk
                if buffer.endswith(b"\n"):
                    return json.loads(buffer), "done"
        finally:
            selector.close()

    def stop(self):
        kill_group(self.process.pid)
        self.process.wait()
        for closing in (self.requests.close, lambda: os.close(self.reply_read)):
            try:
                closing()
            except OSError:
                pass
