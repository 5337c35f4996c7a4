"""The page runner (page_runner.py) as a process inside the sandbox, and the protocol to it: one JSON request per
line, one JSON answer per line, the requests it takes built here."""

import ast
import json
import os
import selectors
import subprocess
from collections.abc import Callable
from typing import BinaryIO

from stackbench.docs import python_code
from stackbench.formats.walkthrough import CodeExample
from stackbench.sandbox.capture import read_capped
from stackbench.sandbox.watch import Watch
from stackbench.validation.document_sandbox import DocumentSandbox
from stackbench.validation.examples import script_name
from stackbench.validation.options import ValidationError
from stackbench.validation.verdicts import Message

RUNNER_GRACE = 15.0  # beyond an example's own time limit, before the runner itself is deemed stuck
ANSWER_LIMIT = 64 * 1024**2  # one answer of the page runner (its outputs are capped well below this)
DRAIN_READS = 64  # reads of the runner's pipe between two looks at the sandbox's limits


class PageProcess:
    """The page runner inside the sandbox, and the way back when it gets stuck: a request that overruns its time
    (or a runner that dies) ends the sandbox's processes and starts a new runner that replays what the page had
    set up so far, so the examples after it still run."""

    def __init__(self, document: DocumentSandbox, start: Message, should_stop: Callable[[], bool]) -> None:
        self.document, self.start_message, self.should_stop = document, start, should_stop
        self.replay: list[Message] = []
        self.stderr: BinaryIO | None = None
        self.buffer = bytearray()
        self._launch()

    def _launch(self) -> None:
        sandbox = self.document.sandbox
        env = {**sandbox.environment, "VIRTUAL_ENV": f"{sandbox.home}/.venv", "PYTHONDONTWRITEBYTECODE": "1"}
        if self.stderr is not None:
            self.stderr.close()
        # The runner's stderr goes to the worker's own file: the page's code cannot turn it into a link.
        self.stderr = sandbox.private_file("runner")
        self.spawned = sandbox.spawn(
            [self.document.python, "-X", "faulthandler", self.document.runner_path],
            cwd=sandbox.work,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.popen = self.spawned.popen
        self.document.runners.add(self.spawned.pid)
        # Spawned with both piped, so both are there.
        assert self.popen.stdin is not None and self.popen.stdout is not None
        self.stdin, self.stdout = self.popen.stdin, self.popen.stdout
        self.buffer = bytearray()
        answer = self._exchange(self.start_message, timeout=120)
        if answer.get("status") != "ready":
            raise ValidationError(f"the page runner did not start: {self._stderr_tail()}")
        for request in self.replay:
            self._exchange(request, timeout=request.get("timeout", 30) + RUNNER_GRACE)

    def _stderr_tail(self) -> str:
        if self.stderr is None:
            return "no output"
        printed, _ = read_capped(self.stderr.fileno(), 8000)
        return printed[-2000:].strip() or "no output"

    def request(self, request: Message, timeout: float, remember: bool = False) -> Message:
        answer = self._exchange(request, timeout + RUNNER_GRACE)
        if answer.get("status") == "died":
            # Killed from outside (an install ends the sandbox's strays): once more, on a new runner.
            self.restart()
            answer = self._exchange(request, timeout + RUNNER_GRACE)
        if answer.get("status") in ("stuck", "died", "process_limit", "disk_limit"):
            self.restart()
        else:
            # Nothing an example starts may outlive it (a daemon, a detached fork bomb): only the runner stays.
            # Every runner stays: a second chance's runner and the page's own are each other's neighbours, not
            # strays.
            self.document.sandbox.kill_strays(keep=self.document.live_runners())
            if self.popen.poll() is not None:
                self._launch()
            if remember:
                self.replay.append(request)
        return answer

    def restart(self) -> None:
        # The runner's launcher is the worker's own child: reaped first, else it stays charged to the sandbox's
        # process count, and ending the sandbox's processes waits out its whole time limit for it.
        self.spawned.kill()
        self.popen.wait()
        self.document.sandbox.kill_processes()
        self._launch()

    def _exchange(self, request: Message, timeout: float) -> Message:
        try:
            self.stdin.write((json.dumps(request) + "\n").encode())
            self.stdin.flush()
        except (BrokenPipeError, OSError):
            return {"status": "died", "message": self._stderr_tail()}
        watch = Watch(self.document.sandbox, timeout, self.should_stop)
        selector = selectors.DefaultSelector()
        selector.register(self.stdout, selectors.EVENT_READ)
        answered = b"\n" in self.buffer
        try:
            while not answered:
                stop = watch.interruption()
                if stop == "timeout":
                    return {"status": "stuck"}
                if stop in ("process_limit", "disk_limit"):
                    return {"status": stop, "limit": self.document.sandbox.limits.max_processes}
                if stop == "cancelled":
                    return {"status": "cancelled"}
                # A pipe gives at most 64 KiB a read: it is drained for a while between two looks at the
                # sandbox, so a flood meets its limit long before the example's time is out, even on a busy host.
                reads, wait = 0, 0.05
                while not answered and reads < DRAIN_READS and selector.select(timeout=wait):
                    chunk = os.read(self.stdout.fileno(), 1 << 16)
                    if not chunk:
                        return {"status": "died", "message": self._stderr_tail()}
                    answered = b"\n" in chunk
                    if not answered and len(self.buffer) + len(chunk) > ANSWER_LIMIT:
                        # The page's code can write to the runner's pipe: a flood must not cost unbounded memory.
                        self.buffer.clear()
                        return {"status": "died", "message": "the page's code flooded the runner's answers"}
                    self.buffer += chunk
                    reads, wait = reads + 1, 0
        finally:
            selector.close()
        line, _, rest = self.buffer.partition(b"\n")
        self.buffer = bytearray(rest)
        try:
            return json.loads(line)
        except ValueError:
            return {"status": "died", "message": line[:500].decode(errors="replace")}

    def close(self) -> None:
        if self.popen.poll() is None:
            try:
                self.stdin.close()
            except OSError:
                pass
            self.spawned.kill()
            self.popen.wait()
        if self.stderr is not None:
            self.stderr.close()


# -- the requests that run an example ------------------------------------------------------------------------------
def session_request(page: str, example: CodeExample, timeout: float) -> Message:
    """A doctest session, its statements numbered by their lines on the page."""
    prefix, session = python_code.session_parts(example.code) or ("", example.code)
    before = prefix.count("\n") + 1 if prefix else 0
    return {
        "op": "session",
        "name": f"{page}:{example.line}",
        "prefix": prefix,
        "line": max(example.line - 1 + before, 0),
        "text": session,
        "timeout": timeout,
    }


def script_request(
    example: CodeExample,
    index: int,
    tree: ast.Module,
    preludes: list[Message],
    timeout: float,
    state: str,
    record_prints: bool,
) -> Message:
    """A script, run in a fork of the page's process after the earlier scripts it builds on (its preludes). A
    `main` it defines and never calls is called at its end, as its reader does (awaited, when it is async)."""
    main = python_code.uncalled_main(tree) if example.style != "tests" else None
    awaited = isinstance(main, ast.AsyncFunctionDef)
    return {
        "op": "script",
        "name": script_name(example, index),
        "code": example.code + ("" if main is None else f"\n{'await ' if awaited else ''}main()\n"),
        "preludes": preludes,
        "async": example.execution_context == "async" or python_code.awaits_at_top_level(tree) or awaited,
        "timeout": timeout,
        "state": state,
        "record_prints": record_prints,
        "package": example.package_init,
        "values": [said.line for said in python_code.value_comments(example.code, python_code.parse(example.code))],
    }


def materialize_request(example: CodeExample, index: int, timeout: float) -> Message:
    """A script that joins the page's process, so what comes after it sees what it did."""
    return {"op": "materialize", "name": script_name(example, index), "code": example.code, "timeout": timeout}
