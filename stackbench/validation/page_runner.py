"""The reader's interpreter for one doc page, run inside the sandbox by the validator (standard library only: it
runs on the reader's Python, whatever its version).

It keeps the page's names the way a reader following the page keeps them in one Python session: doctest
sessions run in it one after another (by the standard doctest runner), and a script's definitions join it when
a later session needs them. Scripts run in a fork of it, so what one script does to the process (exits,
environment variables, global configuration) never leaks into the next, while the names the page defined
before are there.

Protocol: one JSON request per line on stdin, one JSON answer per line on the descriptor that was stdout at
start. File descriptors 1 and 2 go to a capture file while a request runs, so what an example prints (Python,
C code or subprocesses alike) never mixes with the protocol.

One file over 500 lines, on purpose: it is written into the sandbox and runs there on its own, so it can import
nothing beside the standard library."""

from __future__ import annotations

import ast
import difflib
import doctest
import importlib
import importlib.util
import io
import json
import linecache
import os
import platform
import re
import signal
import sys
import tempfile
import time
import traceback
import types
import warnings
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

if TYPE_CHECKING:  # annotations only: this module runs on the reader's Python, which may be older than ours
    import asyncio
    from collections.abc import Callable, Iterable, Sequence
    from typing import Literal

    from _typeshed import ReadableBuffer

    Message = dict[str, Any]  # a request or an answer of the protocol, and their parts: JSON

OUTPUT_CAP = 60_000
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
MAX_CAUSES = 8  # a chain longer than that is a loop of the library's, not more to learn


class Interrupted(KeyboardInterrupt):
    """Time is up: a KeyboardInterrupt, so doctest and most code let it through."""


class Forwarder(io.TextIOBase):
    """sys.stdout and sys.stderr for the whole run. Code keeps references to them (a logging handler made in
    one example, a logger factory), so they stay the same objects and send what they get where it belongs
    now: the capture file, or the doctest runner's output while a session runs."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.target: io.StringIO | None = None
        # While a session runs, standard output's forwarder also keeps what it alone got: log lines a library
        # writes to standard error show in the reader's terminal, but are no part of the output the page shows.
        self.also: io.StringIO | None = None
        self.cleared = ""  # what `also` held when doctest last cleared the output (it compares after clearing)

    def write(self, text: str) -> int:
        target = self.target if self.target is not None else self._stream()
        written = target.write(text)
        if target is not self.target:
            target.flush()
        elif self.also is not None:
            self.also.write(text)
        return written

    def _stream(self) -> TextIO:
        return _FD_STREAMS[self.fd]

    # While a session runs, doctest reads and clears what it printed through these (it takes this object as its
    # output, so a handler made in an earlier example still writes where the reader would see it).
    def getvalue(self) -> str:
        assert self.target is not None, "doctest reads its output only while a session runs"
        return self.target.getvalue()

    def truncate(self, size: int | None = None) -> int:
        assert self.target is not None, "doctest clears its output only while a session runs"
        if self.also is not None:
            self.cleared = self.also.getvalue()
            self.also.truncate(size)
        return self.target.truncate(size)

    def flush(self) -> None:
        (self.target or self._stream()).flush()

    def fileno(self) -> int:
        return self.fd

    @property
    def buffer(self) -> _BinaryForwarder:
        """Bytes written to standard output (click.echo writes there) reach the same place as text."""
        return _BinaryForwarder(self)

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # typeshed has a plain attribute; io's is read-only too
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]  # typeshed has a plain attribute; io's is read-only too
        return "backslashreplace"


class _BinaryForwarder(io.RawIOBase):
    def __init__(self, text: Forwarder) -> None:
        self.text = text

    def write(self, data: ReadableBuffer) -> int:
        written = bytes(data)
        self.text.write(written.decode("utf-8", "replace"))
        return len(written)

    def writable(self) -> bool:
        return True

    def flush(self) -> None:
        self.text.flush()


_FD_STREAMS: dict[int, TextIO] = {}


class Page:
    def __init__(self, start: Message) -> None:
        self.library_modules: list[str] = start.get("library_modules", [])
        # The top-level modules of the other packages the page imports from or tells its reader to install.
        self.page_packages: list[str] = start.get("page_packages", [])
        self.offered: dict[str, str] | None = None  # the library's names, in any of its modules: name -> module
        self.module = types.ModuleType("__main__")
        self.module.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = self.module
        self.names: dict[str, str] = {}  # pseudo file name -> what it is (for tracebacks)
        self.page_folder = ""  # while tests run: the folder holding the page's files
        self.work = os.getcwd()  # the folder the reader works in, where the page's files are
        self.warnings: list[Message] = []
        self.loop: asyncio.AbstractEventLoop | None = None  # the sessions' event loop, made at their first await
        self.protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
        _FD_STREAMS[1] = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
        _FD_STREAMS[2] = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
        self.stdout, self.stderr = Forwarder(1), Forwarder(2)
        sys.stdout, sys.stderr = self.stdout, self.stderr
        sys.stdin = open(os.devnull)
        original = warnings.showwarning

        def record(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            self.warnings.append(
                {"category": category.__name__, "message": str(message), "filename": filename, "lineno": lineno}
            )

        self.original_showwarning = original
        warnings.showwarning = record
        for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
            warnings.simplefilter("default", category)
        signal.signal(signal.SIGALRM, self._alarm)

    # -- the page's names ------------------------------------------------------------------------------------
    @property
    def namespace(self) -> dict[str, Any]:
        """The page's names, as the module __main__ (so classes defined in it pickle and repr as a reader's do)."""
        return self.module.__dict__

    def _quietly(self, code: str, name: str, namespace: dict[str, Any]) -> None:
        self._remember(name, code)
        exec(compile(code, name, "exec", dont_inherit=True), namespace)

    def _remember(self, name: str, code: str) -> None:
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        self.names[name] = name

    # -- requests --------------------------------------------------------------------------------------------
    def handle(self, request: Message) -> Message:
        op = request["op"]
        self.warnings = []
        self._src_layout()
        with Capture() as capture:
            try:
                answer = getattr(self, "op_" + op)(request)
            except Interrupted:
                answer = {"status": "timeout"}
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        answer.setdefault("output", _without_runner_frames(capture.text()))
        answer.setdefault("warnings", self.warnings[:20])
        return answer

    def _src_layout(self) -> None:
        """A `src` folder the page laid out holds the reader's own package, which they install to use it (the src
        layout): from then on its modules import by their package's name, as from the folder the reader works in."""
        src = os.path.join(self.work, "src")
        if src not in sys.path and os.path.isdir(src):
            sys.path.insert(1, src)
            importlib.invalidate_caches()

    def _alarm(self, signum: int, frame: types.FrameType | None) -> NoReturn:
        raise Interrupted()

    def op_setup(self, request: Message) -> Message:
        """Hidden setup the docs' own doctest run uses (sphinx.ext.doctest's testsetup, doctest_global_setup)."""
        try:
            self._quietly(request["code"], request["name"], self.namespace)
        except BaseException as exc:
            return {"status": "exception", "exception": self.describe(exc, request["name"])}
        return {"status": "ok"}

    def op_environ(self, request: Message) -> Message:
        os.environ.update(request["variables"])
        return {"status": "ok"}

    def op_materialize(self, request: Message) -> Message:
        """Run a script that passed in its fork again here, so the sessions after it see what it defined. A name
        the sessions had bound to a function or class that the script rebinds to the module of that name (`import
        tabulate` to set a module flag, after `from tabulate import tabulate`) stays the sessions' own: the script
        is a file of its own, and the reader's session goes on with what they typed in it."""
        namespace = self.namespace
        bound = {name: value for name, value in namespace.items() if not _is_module(value)}
        signal.setitimer(signal.ITIMER_REAL, request.get("timeout", 30))
        try:
            self._run_code(request["code"], request["name"], namespace)
        except Interrupted:
            raise
        except BaseException as exc:
            return {"status": "exception", "exception": self.describe(exc, request["name"])}
        finally:
            for name, value in bound.items():
                module = namespace.get(name)
                if isinstance(module, types.ModuleType) and module.__name__ == name:
                    namespace[name] = value
        return {"status": "ok"}

    def op_session(self, request: Message) -> Message:
        namespace = self.namespace
        name = request["name"]
        text = request["text"]
        if request.get("prefix", "").strip():
            # A definition typed as is before the prompts: it runs first, like the reader's first paste.
            signal.setitimer(signal.ITIMER_REAL, request.get("timeout", 30))
            try:
                self._run_code(request["prefix"], name + ":prefix", namespace)
            except Interrupted:
                raise
            except BaseException as exc:
                return {
                    "status": "ok",
                    "statements": 0,
                    "ran": 0,
                    "skipped": 0,
                    "failures": [
                        {
                            "line": request.get("line", 0),
                            "source": request["prefix"],
                            "want": "",
                            "got": "",
                            "expects_exception": False,
                            "exception": self.describe(exc, name + ":prefix"),
                        }
                    ],
                }
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        parser = doctest.DocTestParser()
        try:
            test = parser.get_doctest(text, namespace, name, name, request.get("line", 0))
        except ValueError as exc:
            return {"status": "unparsable", "message": str(exc)}
        test.globs = namespace  # the page's names, not a copy: what a session defines, the next one sees
        runner = SessionRunner(self, name, optionflags=DOCTEST_FLAGS)
        self.stdout.target = self.stderr.target = runner.spoof
        self.stdout.also = runner.printed
        signal.setitimer(signal.ITIMER_REAL, request.get("timeout", 30))
        try:
            runner.run(test, out=lambda text: None, clear_globs=False)
        except Interrupted:
            return {
                "status": "timeout",
                "statements": len(test.examples),
                "ran": runner.tries_so_far,
                "failures": runner.failures_seen,
            }
        finally:
            self.stdout.target = self.stderr.target = self.stdout.also = None
        return {
            "status": "ok",
            "statements": len(test.examples),
            "ran": runner.tries_so_far,
            "skipped": runner.skips,
            "failures": runner.failures_seen,
        }

    def op_script(self, request: Message) -> Message:
        """Run a script in a fork of the page: its preludes (the earlier scripts it builds on) quietly, as far as
        each gets, then it, with the page's variables set."""
        return self._forked(request, lambda result_path: self._child(request, self.namespace, result_path))

    def op_tests(self, request: Message) -> Message:
        """Run a test module the way its reader does, in a fork of the page: saved as a file beside the page's
        files (its conftest.py, the modules it imports) and run with pytest, which collects its tests and fixtures
        on its own, never from the page's session."""
        return self._forked(request, lambda result_path: self._tests_child(request, result_path))

    def _forked(self, request: Message, child: Callable[[str], NoReturn]) -> Message:
        """child(result_path) in a fork with the request's time limit; what it wrote to result_path is the answer."""
        result_fd, result_path = tempfile.mkstemp(prefix="result-", dir=request.get("state"))
        os.close(result_fd)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                os.setpgid(0, 0)
                signal.signal(signal.SIGALRM, signal.SIG_DFL)
                child(result_path)
            except BaseException as exc:
                # A fault of the runner's own in the fork is answered from the fork: back in the page's loop it
                # would be a second runner reading the page's requests.
                message = f"{type(exc).__name__}: {_safe_str(exc)}"
                self._answer_and_exit({"status": "internal", "message": message}, result_path)
            finally:
                os._exit(1)
        deadline = time.monotonic() + request.get("timeout", 30)
        status = 0  # set by waitpid before it is read
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.01)
        else:
            _kill_group(pid)
            os.waitpid(pid, 0)
            _kill_group(pid)
            return {"status": "timeout"}
        _kill_group(pid)  # what the script started in the background goes with it
        try:
            with open(result_path) as handle:
                result = json.load(handle)
        except (OSError, ValueError):
            code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
            result = {"status": "crashed", "exit": code}
        finally:
            os.unlink(result_path)
        return result

    def _child(self, request: Message, namespace: dict[str, Any], result_path: str) -> NoReturn:
        result: Message = {"status": "ok"}
        prints: list[list[int | str]] = []  # [line, text] of each print
        values: list[list[int | str]] = []  # [place, repr]: the value of the place-th statement the page shows one of
        if request.get("record_prints"):
            self._record_prints(request["name"], prints)
        try:
            os.environ.update(request.get("environment", {}))
            for prelude in request.get("preludes", []):
                try:
                    self._run_code(prelude["code"], prelude["name"], namespace, quiet=True)
                except (Exception, SystemExit):
                    pass  # an earlier script that broke off: what it defined before stays, as in the reader's file
            sys.argv = [request["name"]]
            self._run_code(
                request["code"],
                request["name"],
                namespace,
                run_async=request.get("async", False),
                package=request.get("package"),
                values=values if request.get("values") else None,
                value_lines=request.get("values", []),
            )
        except SystemExit as exc:
            if exc.code not in (None, 0):
                frames = self.describe(exc, request["name"])["frames"]
                result = {
                    "status": "exit",
                    "exit": exc.code if isinstance(exc.code, int) else 1,
                    "message": "" if isinstance(exc.code, int) else str(exc.code),
                    "raised_in": frames[-1]["where"] if frames else "example",
                    "line": frames[-1]["lineno"] if frames else 0,  # of the code it was raised in
                }
        except BaseException as exc:
            result = {"status": "exception", "exception": self.describe(exc, request["name"])}
        result["warnings"] = self.warnings[:20]
        result["prints"] = prints[:1000]
        result["values"] = values
        self._answer_and_exit(result, result_path)

    def varies(self, source: str, printed: str, namespace: dict[str, Any], makers: Sequence[str] = ()) -> list[str]:
        """What the statement shows run again twice, when it shows something else each time it runs (a random id,
        a font picked at random, the time): run again in two forks of the page as it is now, each in a folder of
        its own (a file it writes lands there), after the session's statements that made the names it uses
        (`art = make("random")` before `print(art)`), what it shows (its output, its value) differs between them.
        (One fork alone cannot tell a random value from `next(numbers)`, which gives the next one every time; two
        forks of one state give the same.) Nothing when it shows the same each time."""
        if not printed.strip():
            return []
        try:
            made = [compile(maker, "<again>", "exec", dont_inherit=True) for maker in makers]
            code = compile(source, "<again>", "single", dont_inherit=True)
        except SyntaxError:
            return []

        def child(result_path: str) -> NoReturn:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            os.chdir(tempfile.mkdtemp(prefix="again-"))
            if "random" in sys.modules:
                sys.modules["random"].seed()  # a fork copies the generator's state; a new process would not
            shown = io.StringIO()
            sys.stdout = sys.stderr = shown
            try:
                for maker in made:
                    exec(maker, namespace)
                shown.truncate(0)
                exec(code, namespace)
                result: Message = {"status": "ok", "shown": shown.getvalue()}
            except BaseException:
                result = {"status": "exception"}
            self._answer_and_exit(result, result_path)

        runs = [self._forked({"timeout": 5}, child) for _ in range(2)]
        shown = [str(run.get("shown") or "") for run in runs if run.get("status") == "ok"]
        return shown if len(shown) == 2 and all(shown) and shown[0] != shown[1] else []

    @staticmethod
    def _answer_and_exit(result: Message, result_path: str) -> NoReturn:
        """A forked child's last act: what it writes to result_path is its answer to the page."""
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            with open(result_path, "w") as out:
                json.dump(result, out, default=repr)
        finally:
            os._exit(0)

    def _tests_child(self, request: Message, result_path: str) -> NoReturn:
        result: Message
        try:
            os.environ.update(request.get("environment", {}))
            # The reader runs the tests at their own terminal, not on a CI server, where test tools behave
            # otherwise (a snapshot tool only records values off CI).
            os.environ.pop("CI", None)
            path = os.path.abspath(request["file"])
            with open(path, "w", encoding="utf-8") as module:
                module.write(request["code"])
            self.page_folder = os.getcwd()
            import pytest

            outcomes = TestOutcomes(self, path)
            sys.argv = ["pytest"]
            code = pytest.main([path, *request.get("options", []), "-p", "no:cacheprovider", "-q"], plugins=[outcomes])
            result = outcomes.answer(int(code))
        except BaseException as exc:
            result = {"status": "exception", "exception": self.describe(exc, request["file"])}
        result["warnings"] = []
        self._answer_and_exit(result, result_path)

    @staticmethod
    def _record_prints(name: str, prints: list[list[int | str]]) -> None:
        """What each print() of the example itself wrote to standard output, by line: docs that write the output
        under each print document exactly that."""
        import builtins

        original = builtins.print

        def recording_print(
            *args: object,
            sep: str | None = " ",
            end: str | None = "\n",
            file: TextIO | None = None,
            flush: bool = False,
        ) -> None:
            if file is None or file is sys.stdout:
                frame = sys._getframe(1)
                if frame.f_code.co_filename == name:
                    text = (" " if sep is None else sep).join(str(a) for a in args) + ("\n" if end is None else end)
                    prints.append([frame.f_lineno, text[:OUTPUT_CAP]])
            original(*args, sep=sep, end=end, file=file, flush=flush)

        builtins.print = recording_print  # type: ignore[assignment]  # print's stub is overloaded; this takes every form

    def _run_code(
        self,
        code: str,
        name: str,
        namespace: dict[str, Any],
        quiet: bool = False,
        run_async: bool = False,
        package: str | None = None,
        values: list[list[int | str]] | None = None,
        value_lines: Sequence[int] = (),
    ) -> None:
        """Run code as the script `name`; package: as the `__init__` module of that package of the reader's, which
        the page says the code is (code that acts on the package it is in, `register_this_package()`, finds it);
        values: where the repr of the top-level statement at each of value_lines goes as it runs, [place, repr] (its
        place in value_lines, which names the same statement whatever lines a repaired copy adds above it)."""
        self._remember(name, code)
        flags = 0x2000 if run_async else 0  # ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        source: str | ast.Module = code
        if values is not None:
            source = _recording_values(ast.parse(code), list(value_lines))
            namespace[VALUE_RECORDER] = lambda place, value: values.append([place, _bounded_repr(value)])
        compiled = compile(source, name, "exec", flags=flags, dont_inherit=True)
        namespace["__name__"] = package or "__main__"
        namespace["__file__"] = name
        if package:
            namespace["__package__"] = package
            namespace["__path__"] = [os.path.join(os.getcwd(), package)]
        if quiet:
            saved = self.stdout.target, self.stderr.target
            sink = io.StringIO()
            self.stdout.target = self.stderr.target = sink
            try:
                self._exec(compiled, namespace)
            finally:
                self.stdout.target, self.stderr.target = saved
        else:
            self._exec(compiled, namespace)

    def exec_awaiting(self, compiled: types.CodeType, namespace: dict[str, Any]) -> None:
        """A session's statement: one that awaits at its top level runs to its end in the page's event loop, which
        stays for the page's later statements (what a statement started in it may still be running there)."""
        if not compiled.co_flags & CO_COROUTINE:
            exec(compiled, namespace)
            return
        import asyncio

        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(eval(compiled, namespace))

    @staticmethod
    def _exec(compiled: types.CodeType, namespace: dict[str, Any]) -> None:
        result = eval(compiled, namespace)
        if isinstance(result, types.CoroutineType):
            import asyncio

            asyncio.run(result)

    def op_resolve(self, request: Message) -> Message:
        """Where names could come from: the page's names so far, a module of that name, the library."""
        namespace = self.namespace
        return {
            "status": "ok",
            "names": {
                name: {
                    "defined": name in namespace,
                    "importable": _importable(name),
                    "provided_by": self.providers(name),
                    "member_import": _member_import(name, request.get("attributes", {}).get(name, [])),
                }
                for name in request["names"]
            },
        }

    def op_parameters(self, request: Message) -> Message:
        """The positional parameters of callables named by dotted paths (`markdown.markdown`): from the page's
        names so far, or from the module a path starts with, imported as its reader would."""
        return {"status": "ok", "parameters": {path: self._positional(path) for path in request["callees"]}}

    def _positional(self, path: str) -> list[str] | None:
        import inspect

        parts = path.split(".")
        if parts[0] not in self.namespace and not (len(parts) > 1 and _importable(parts[0])):
            return None
        try:
            target: Any = self.namespace[parts[0]] if parts[0] in self.namespace else importlib.import_module(parts[0])
            for number, attribute in enumerate(parts[1:], 2):
                # a submodule its package does not import itself is imported, as `from a.b import f` would
                target = getattr(target, attribute, None) or importlib.import_module(".".join(parts[:number]))
            parameters = inspect.signature(target).parameters.values()
        except Exception:
            return None
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return [parameter.name for parameter in parameters if parameter.kind in positional]

    def op_signatures(self, request: Message) -> Message:
        """The library's definitions of names a page lists signatures of, with their parameters (name, kind, has a
        default), found where the reader looks: the page's names so far, the modules it imports from the library,
        the library's top-level modules, then every submodule of them. A method (listed with `self`) is looked
        for on the classes of those modules; so is a name no module defines, which the page lists as its reader
        calls it on an instance (without `self`)."""
        modules = list(dict.fromkeys([*request.get("modules", []), *self.library_modules]))
        places = [self.namespace, *(vars(m) for m in map(_imported, modules) if m is not None)]
        wanted = request["names"]
        found = {name: self._definitions(name, places, method) for name, method in wanted.items()}
        if any(not definitions for definitions in found.values()):
            places += [vars(m) for m in _submodules(self.library_modules)]
            found = {name: found[name] or self._definitions(name, places, wanted[name]) for name in wanted}
            found = {name: found[name] or self._definitions(name, places, True) for name in wanted}
        return {"status": "ok", "definitions": found}

    def op_spellings(self, request: Message) -> Message:
        """The names nothing provides that are a slip of one the reader finds where they look: a name of the
        library (in any of its modules) or one of Python's constants."""
        if self.offered is None:
            self.offered = {}
            modules = [m for m in map(_imported, self.library_modules) if m is not None]
            for module in [*modules, *_submodules(self.library_modules)]:
                for name, value in vars(module).items():
                    # Named by the top-level module that offers it, or else by the module that defines it.
                    there = self.offered.get(name)
                    defined_here = (
                        there not in self.library_modules and getattr(value, "__module__", 0) == module.__name__
                    )
                    if not name.startswith("_") and (there is None or defined_here):
                        self.offered[name] = module.__name__
        slips = {name: _slip_of(name, self.offered) for name in request["names"]}
        return {"status": "ok", "spellings": {name: meant for name, meant in slips.items() if meant}}

    @staticmethod
    def _definitions(name: str, places: list[dict[str, Any]], method: bool) -> list[Message]:
        import inspect

        owners = [o for place in places for o in place.values() if isinstance(o, type)] if method else []
        found = [place[name] for place in places if name in place] if not method else []
        found += [vars(owner)[name] for owner in owners if name in vars(owner)]
        definitions: list[Message] = []
        for definition in dict.fromkeys(map(id, found)):
            target = next(f for f in found if id(f) == definition)
            target = target.__func__ if isinstance(target, (classmethod, staticmethod)) else target
            where = f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', name)}"
            # Only what the library defines with `def` or `class` has parameter names of its own: an object made
            # at import (a partial, an instance) is there, with nothing a listing could name differently.
            defined = inspect.isfunction(target) or inspect.isclass(target)
            try:
                parameters = inspect.signature(target).parameters.values() if defined else None
            except (TypeError, ValueError):
                parameters = None
            if parameters is None:
                definitions.append({"where": where, "parameters": None})
                continue
            listed = [[p.name, p.kind.name, p.default is not p.empty] for p in parameters]
            definitions.append({"where": where, "parameters": listed})
        return definitions

    def op_probe(self, request: Message) -> Message:
        """Which modules import (found without importing them)."""
        found = {}
        for module in request["modules"]:
            try:
                found[module] = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError, AttributeError):
                found[module] = False
        return {"status": "ok", "found": found}

    def op_environment(self, request: Message) -> Message:
        from importlib import metadata

        distributions = {}
        for dist in metadata.distributions():
            name = dist.metadata["Name"]
            if name:
                distributions[name] = dist.version
        try:
            library = metadata.distribution(request.get("library", ""))
            requires_python = (library.metadata.get_all("Requires-Python") or [""])[0]
            console_scripts = sorted({entry.name for entry in library.entry_points if entry.group == "console_scripts"})
        except (metadata.PackageNotFoundError, ValueError):
            requires_python, console_scripts = "", []
        return {
            "status": "ok",
            "python": platform.python_version(),
            "distributions": dict(sorted(distributions.items(), key=lambda item: item[0].lower())),
            "requires_python": requires_python,  # the library's: the oldest Python its readers may have
            "console_scripts": console_scripts,  # the library's commands, which may run the reader's files
        }

    # -- what went wrong -------------------------------------------------------------------------------------
    def describe_frames(self, tb: types.TracebackType | None, current: str) -> list[Message]:
        """The frames of a traceback a reader reads: the runner's and doctest's own left out."""
        frames: list[Message] = []
        for frame in traceback.extract_tb(tb):
            if frame.filename == __file__ or frame.filename.endswith("page_runner.py"):
                continue
            if frame.filename.endswith(os.sep + "doctest.py"):
                continue
            frames.append(
                {
                    "filename": frame.filename,
                    "lineno": frame.lineno or 0,
                    "name": frame.name,
                    "where": self.where(frame.filename, current),
                    "line": frame.line or "",
                }
            )
        return frames

    def describe(self, exc: BaseException, current: str, tb: types.TracebackType | None = None) -> Message:
        tb = tb if tb is not None else exc.__traceback__
        sole = _sole_exception(exc)
        if sole is not None:
            # A task group raises what its body or its one failing task raised inside a group: the reader reads
            # that exception, where it was raised, after the lines that led to the group.
            inner = self.describe(sole, current)
            outer = self.describe_frames(tb, current)
            return {**inner, "frames": outer + inner["frames"], "group": type(exc).__name__}
        frames = self.describe_frames(tb, current)
        if isinstance(exc, SyntaxError) and exc.filename:
            frames.append(
                {
                    "filename": exc.filename,
                    "lineno": exc.lineno or 0,
                    "name": "<module>",
                    "where": self.where(exc.filename, current),
                }
            )
        info: Message = {
            "type": type(exc).__name__,
            "module": type(exc).__module__,
            "mro": [f"{c.__module__}.{c.__qualname__}" for c in type(exc).__mro__],
            "aliases": self.aliases(type(exc)),
            "message": _safe_str(exc),
            "frames": frames,
            "traceback": _format(exc, tb),
            "causes": _causes(exc),
        }
        if isinstance(exc, NameError):
            name = getattr(exc, "name", None) or _quoted(info["message"])
            info["name"] = name
            info["importable"] = _importable(name)
            info["provided_by"] = self.providers(name)
            source = "".join(linecache.getlines(current))
            reached = set(re.findall(r"(?<![\w.])" + re.escape(name or "") + r"\.(\w+)", source))
            info["member_import"] = bool(name and info["importable"] and _member_import(name, sorted(reached)))
        elif isinstance(exc, ImportError):
            info["name"] = exc.name
            missing = _quoted(info["message"]) if "cannot import name" in info["message"] else None
            info["missing"] = missing
            if missing and exc.name:
                module = sys.modules.get(exc.name)
                if module is not None:
                    info["suggestions"] = _close(missing, dir(module))
        elif isinstance(exc, AttributeError):
            obj = getattr(exc, "obj", None)
            name = getattr(exc, "name", None)
            info["name"] = name
            if obj is not None:
                kind = type(obj)
                info["owner"] = (
                    obj.__name__ if isinstance(obj, types.ModuleType) else f"{kind.__module__}.{kind.__qualname__}"
                )
                if name:
                    info["suggestions"] = _close(name, dir(obj))
                    if isinstance(obj, types.ModuleType):
                        info["member_has"] = _member_import(obj.__name__, [name])
            elif name and tb is not None:
                info["none_module"] = self._none_module(tb, name)
        if isinstance(exc, OSError):
            info["errno"] = exc.errno
            info["filename"] = str(exc.filename) if exc.filename is not None else None
        if isinstance(exc, FileNotFoundError) and exc.filename is not None:
            # A folder of the reader's working folder that is not there: a file written into it cannot be made.
            folder = os.path.dirname(os.path.abspath(os.fsdecode(exc.filename)))
            if folder.startswith(os.getcwd() + os.sep) and not os.path.isdir(folder):
                info["folder_missing"] = os.path.relpath(folder)
        return info

    def _none_module(self, tb: types.TracebackType, name: str) -> str | None:
        """`lib.integration.name` failing because the library set lib.integration to None (its optional
        dependency is missing): "lib.integration"."""
        while tb.tb_next is not None:
            tb = tb.tb_next
        line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        for module in self.library_modules:
            for found in re.finditer(r"\b(" + re.escape(module) + r")\.(\w+)\." + re.escape(name) + r"\b", line):
                owner = tb.tb_frame.f_globals.get(found.group(1))
                if isinstance(owner, types.ModuleType) and getattr(owner, found.group(2), 0) is None:
                    return f"{found.group(1)}.{found.group(2)}"
        return None

    def providers(self, name: str | None) -> list[str]:
        """The modules that offer a name: the library's top-level modules first; then the top-level modules of the
        page's other packages, which the reader knows the page takes names from; then the standard library's
        typing, whose names (NewType, Optional) every reader of annotated code knows where to import from, and its
        everyday modules (`Path`, `dataclass`); then the library's submodules (a name such as CompletionItem lives
        deeper)."""
        if not name:
            return []
        found = [m for m in self.library_modules if _has(m, name)]
        found = found or [m for m in self.page_packages if _exports(m, name)][:1]
        if found:
            return found
        import typing

        if name in typing.__all__:
            return ["typing"]
        if name in EVERYDAY_NAMES:
            return [EVERYDAY_NAMES[name]]
        import pkgutil

        for top in self.library_modules:
            package = sys.modules.get(top)
            for info in pkgutil.iter_modules(getattr(package, "__path__", None) or []):
                if not info.name.startswith("_") and _has(f"{top}.{info.name}", name):
                    return [f"{top}.{info.name}"]
        return _deeper_class_home(self.library_modules, name)

    def aliases(self, kind: type) -> list[str]:
        """Other names the library or a module the page imported gives the exception's class or one of its bases
        (orjson's `JSONEncodeError` is `TypeError`): the page may show the exception under either."""
        bases = {c for c in kind.__mro__ if c not in (BaseException, Exception, object)}
        modules = [sys.modules.get(name) for name in self.library_modules]
        modules += [value for value in list(self.namespace.values()) if _is_module(value)]
        return sorted(
            {
                name
                for module in modules
                if module is not None
                for name, value in list(vars(module).items())
                if issubclass(type(value), type) and value in bases and name != value.__name__
            }
        )

    def where(self, filename: str, current: str) -> str:
        if filename in (current, current + ":prefix") or filename.startswith("<doctest "):
            return "example"
        if filename in self.names:
            return "page"
        path = os.path.realpath(filename)
        if "site-packages" in path or "dist-packages" in path:
            return "package"
        if path.startswith(os.path.realpath(sys.base_prefix)):
            return "stdlib"
        if self.page_folder and path.startswith(os.path.realpath(self.page_folder) + os.sep):
            return "page"  # a file of the page's, as pytest imports it (its conftest.py, a module it shows)
        return "other"


# The name under which a script whose values the page shows hands each value to the runner.
VALUE_RECORDER = "__stackbench_value__"


def _recording_values(tree: ast.Module, lines: list[int]) -> ast.Module:
    """The module with each top-level statement at one of lines handing its value to VALUE_RECORDER with that
    line's place in lines: an expression's result, or the name an assignment binds, once it is bound."""
    body: list[ast.stmt] = []
    for statement in tree.body:
        if statement.lineno not in lines:
            body.append(statement)
            continue
        if isinstance(statement, ast.Expr):
            value: ast.expr = statement.value
        elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
            body.append(statement)
            value = ast.Name(statement.targets[0].id, ast.Load())
        else:
            body.append(statement)
            continue
        place = ast.Constant(lines.index(statement.lineno))
        call = ast.Call(ast.Name(VALUE_RECORDER, ast.Load()), [place, value], [])
        body.append(ast.copy_location(ast.Expr(call), statement))
    tree.body = body
    return ast.fix_missing_locations(tree)


def _is_module(value: object) -> bool:
    """A module, asked of its type alone: `isinstance` also asks the value for its `__class__`, which a lazy
    object (Django's unconfigured `settings`) answers by raising."""
    return issubclass(type(value), types.ModuleType)


def _sole_exception(exc: BaseException) -> BaseException | None:
    """The one exception a plain exception group holds, however deep (what a task group raises for its body or
    for its one failing task); None for any other exception, a group of several, or a library's own kind of
    group (a validation error gathering its fields' errors means itself)."""
    kind = type(exc)
    plain = kind.__name__ in ("ExceptionGroup", "BaseExceptionGroup") and kind.__module__.split(".")[0] in (
        "builtins",
        "exceptiongroup",  # the backport, on a Python older than 3.11
    )
    held = getattr(exc, "exceptions", None)
    if not plain or not isinstance(held, tuple) or len(held) != 1 or not isinstance(held[0], BaseException):
        return None
    return _sole_exception(held[0]) or held[0]


def _bounded_repr(value: object) -> str:
    try:
        return repr(value)[:5000]
    except Exception:  # a repr that fails is no value to compare
        return ""


def _causes(exc: BaseException) -> list[Message]:
    """The exceptions behind this one, nearest first (what `raise ... from` or an error while handling gave): a
    library's own error often stands for a lower one, such as the refused connection behind a "load failed"."""
    causes: list[Message] = []
    link: BaseException | None = exc
    while link is not None and len(causes) < MAX_CAUSES:
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)
        if link is not None:
            filename = getattr(link, "filename", None)
            causes.append(
                {
                    "type": type(link).__name__,
                    "mro": [f"{c.__module__}.{c.__qualname__}" for c in type(link).__mro__],
                    "message": _safe_str(link)[:300],
                    **({"filename": filename} if isinstance(filename, str) else {}),
                }
            )
    return causes


class TestOutcomes:
    """A pytest plugin that keeps what happened to a test module: how many tests passed, failed or erred, and each
    failure's exception (where it was raised: collecting the module, setting a test up, calling it, tearing it
    down)."""

    def __init__(self, page: Page, path: str) -> None:
        self.page, self.path = page, path
        self.counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
        self.failures: list[Message] = []

    def pytest_exception_interact(self, node: Any, call: Any, report: Any) -> None:
        excinfo = call.excinfo
        value, tb, cause = excinfo.value, excinfo.tb, excinfo.value.__cause__
        if report.when == "collect" and isinstance(cause, (ImportError, SyntaxError)):
            # pytest could not import the module (its CollectError): what the reader's traceback ends in, the
            # module's own import or syntax error, is what they meet.
            value, tb = cause, cause.__traceback__
        exception = self.page.describe(value, self.path, tb)
        shown = [line[1:].strip() for line in report.longreprtext.split("\n") if line.startswith("E ")]
        if exception["type"] == "FixtureLookupError":
            # The fixtures pytest has (the page's, its conftest.py's, the plugins'): what a missing one may be a
            # slip of.
            shown += [
                line[1:].strip()
                for line in report.longreprtext.split("\n")
                if line.startswith(">") and line[1:].strip().startswith("available fixtures:")
            ]
        if exception["type"] == "FixtureLookupError" or not exception["message"].strip():
            exception["message"] = "\n".join(shown) or exception["message"]
        if len(self.failures) < 20:
            self.failures.append({"test": getattr(node, "name", ""), "when": report.when, "exception": exception})

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.counts["failed" if report.when == "call" else "errors"] += 1
        elif report.skipped:
            self.counts["skipped"] += 1
        elif report.when == "call":
            self.counts["passed"] += 1

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.counts["errors"] += 1

    def answer(self, exit_code: int) -> Message:
        return {"status": "ok", "exit": exit_code, "tests": self.counts, "failures": self.failures}


TOP_LEVEL_AWAIT = 0x2000  # ast.PyCF_ALLOW_TOP_LEVEL_AWAIT (ast is not imported for one number)
CO_COROUTINE = 0x80  # inspect.CO_COROUTINE: code compiled with an await at its top level


def _future_flags(namespace: dict[str, Any]) -> int:
    """The compiler flags of the `from __future__ import …` the page's names hold, as doctest works them out."""
    import __future__

    flags = 0
    for name in __future__.all_feature_names:
        imported = namespace.get(name)
        if imported is not None and imported is getattr(__future__, name):
            flags |= imported.compiler_flag
    return flags


class SessionRunner(doctest.DocTestRunner):
    """The standard runner, collecting what failed instead of printing it."""

    def __init__(self, page: Page, name: str, optionflags: int):
        super().__init__(verbose=False, optionflags=optionflags)
        self.page, self.name = page, name
        # doctest's own buffer for a session's output (its private _fakeout) becomes what the forwarders write to,
        # and doctest reads through the forwarder instead: what any handler printed reaches the session.
        self.spoof: io.StringIO = self._fakeout  # type: ignore[has-type]  # private to doctest: typeshed omits it
        self._fakeout = page.stdout
        # What standard output alone got (doctest's own buffer class: it clears it and ends it with a newline alike).
        self.printed: io.StringIO = type(self.spoof)()
        self._checker = StdoutChecker(self)
        self.failures_seen: list[Message] = []
        self.tries_so_far = 0
        self.skips = 0

    def report_start(self, out: Callable[[str], object], test: doctest.DocTest, example: doctest.Example) -> None:
        self.tries_so_far += 1

    def report_failure(
        self, out: Callable[[str], object], test: doctest.DocTest, example: doctest.Example, got: str
    ) -> None:
        failure = self._failure(test, example, got=got)
        printed = self.page.stdout.cleared
        if printed != got:
            failure["stdout"] = _without_runner_frames(printed)[-OUTPUT_CAP:]
        again = self.page.varies(example.source, got, test.globs, _makers(test.examples, example))
        if again:
            failure["shown_again"] = again
        assigned = _assigned_name(example.source)
        if not got.strip() and assigned in test.globs:
            failure["assigned"] = _bounded_repr(test.globs[assigned])
        self.failures_seen.append(failure)

    def report_unexpected_exception(
        self,
        out: Callable[[str], object],
        test: doctest.DocTest,
        example: doctest.Example,
        exc_info: tuple[type[BaseException], BaseException, types.TracebackType],
    ) -> None:
        if isinstance(exc_info[1], Interrupted):
            raise exc_info[1]
        failure = self._failure(test, example, got=self.spoof.getvalue())
        failure["exception"] = self.page.describe(exc_info[1], self.name, exc_info[2])
        self.failures_seen.append(failure)

    def run(
        self,
        test: doctest.DocTest,
        compileflags: int | None = None,
        out: Callable[[str], object] | None = None,
        clear_globs: bool = True,
    ) -> doctest.TestResults:
        self.skips = sum(1 for example in test.examples if example.options.get(doctest.SKIP))
        if compileflags is None:
            compileflags = _future_flags(test.globs)
        # The reader's async REPL (`python -m asyncio`, IPython), where a page's `>>> await …` runs: a statement may
        # await at its top level, and is awaited in the page's one event loop. doctest runs each statement with
        # the `exec` its module finds first.
        doctest.exec = self.page.exec_awaiting  # type: ignore[attr-defined]  # a module global of our own
        try:
            return super().run(test, compileflags | TOP_LEVEL_AWAIT, out, clear_globs)
        finally:
            delattr(doctest, "exec")

    @staticmethod
    def _failure(test: doctest.DocTest, example: doctest.Example, got: str) -> Message:
        return {
            "line": (test.lineno or 0) + example.lineno,
            "source": example.source,
            "want": example.want,
            "got": _without_runner_frames(got)[-OUTPUT_CAP:],
            "expects_exception": example.exc_msg is not None,
        }


def _assigned_name(source: str) -> str | None:
    """The one name a statement assigns (`now = Instant.now()`), if it is one assignment to one name."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign) or len(tree.body[0].targets) != 1:
        return None
    target = tree.body[0].targets[0]
    return target.id if isinstance(target, ast.Name) else None


def _makers(examples: list[doctest.Example], example: doctest.Example) -> list[str]:
    """The session's statements before `example` that last assigned a name it uses, in order."""
    try:
        used = {node.id for node in ast.walk(ast.parse(example.source)) if isinstance(node, ast.Name)}
    except SyntaxError:
        return []
    makers: list[str] = []
    for earlier in reversed(examples[: examples.index(example)]):
        try:
            tree = ast.parse(earlier.source)
        except SyntaxError:
            continue
        assigned = {
            target.id
            for node in tree.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        if assigned & used:
            makers.insert(0, earlier.source)
            used -= assigned
    return makers


class StdoutChecker(doctest.OutputChecker):
    """A statement's output matches what the page shows as everything it wrote, or as what it wrote to standard
    output alone: doctest compares standard output, and a reader's terminal shows log lines on standard error
    beside the output the page shows, which they read past."""

    def __init__(self, runner: SessionRunner) -> None:
        self.runner = runner

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if super().check_output(want, got, optionflags):
            return True
        printed = self.runner.page.stdout.cleared
        return printed != got and super().check_output(want, printed, optionflags)


class Capture:
    """Descriptors 1 and 2 into a temporary file while a request runs (what it prints, whoever prints it)."""

    def __enter__(self) -> Capture:
        sys.stdout.flush()
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(1), os.dup(2)
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        for stream in _FD_STREAMS.values():
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in self.saved:
            os.close(fd)
        self.file.seek(0)
        data = self.file.read()
        self.file.close()
        if len(data) > OUTPUT_CAP:
            head, tail = data[: OUTPUT_CAP // 4], data[-(OUTPUT_CAP - OUTPUT_CAP // 4) :]
            cut = len(data) - len(head) - len(tail)
            data = head + f"\n[... {cut} bytes cut ...]\n".encode() + tail
        self.data = data.decode("utf-8", "replace")
        return False

    def text(self) -> str:
        return getattr(self, "data", "")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except BaseException:
        return f"<{type(exc).__name__} that cannot be shown>"


def _format(exc: BaseException, tb: types.TracebackType | None) -> str:
    try:
        lines = traceback.format_exception(type(exc), exc, tb)
    except BaseException:
        return _safe_str(exc)
    kept = [line for line in lines if "page_runner.py" not in line and "/doctest.py" not in line]
    return "".join(kept)[-OUTPUT_CAP:]


# A frame of this runner or of doctest in a printed stack (a traceback in a session, a logger that shows the
# whole stack of a caught exception): the reader's script or session is the bottom of their stack, so the frame,
# and its source line and the values shown under it (indented deeper than it), are no part of what they see.
RUNNER_FRAME = re.compile(r'^[ >]*File "[^"\n]*(?:/doctest|page_runner)\.py", line \d+')


def _without_runner_frames(output: str) -> str:
    if '.py", line' not in output:
        return output
    kept: list[str] = []
    depth: int | None = None  # the indentation of the runner's frame being left out
    for line in output.splitlines(keepends=True):
        if RUNNER_FRAME.match(line):
            depth = len(line) - len(line.lstrip(" >"))
            continue
        # Its lines, and the blank line that sets it apart from the next frame.
        if depth is not None and (not line.strip() or len(line) - len(line.lstrip(" ")) > depth):
            continue
        depth = None
        kept.append(line)
    return "".join(kept)


def _quoted(message: str) -> str | None:
    parts = message.split("'")
    return parts[1] if len(parts) >= 3 else None


def _importable(name: str | None) -> bool:
    if not name:
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError, AttributeError):
        return False


def _member_import(module_name: str, attributes: list[str]) -> bool:
    """Whether code reaching these attributes on the module's name means the module's member of that name
    (`datetime.utcnow()`: the class `datetime.datetime`, not the module): the module lacks one of them and the
    member has them all."""
    if not attributes or not _importable(module_name):
        return False
    module = _imported(module_name)
    member = getattr(module, module_name.rpartition(".")[2], None)
    return (
        member is not None
        and not all(hasattr(module, attribute) for attribute in attributes)
        and all(hasattr(member, attribute) for attribute in attributes)
    )


def _has(module_name: str, name: str | None) -> bool:
    if not name:
        return False
    try:
        module = importlib.import_module(module_name)
    except BaseException:
        return False
    return hasattr(module, name)


def _imported(module_name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(module_name)
    except (Exception, SystemExit):  # a module that exits on import; the runner's own interruption goes through
        return None


def _submodules(packages: list[str]) -> list[types.ModuleType]:
    """Every submodule of the packages that imports (their `__main__` and tests left alone: running or
    collecting them is no lookup)."""
    import pkgutil

    found = []
    for top in packages:
        package = _imported(top)
        for info in pkgutil.walk_packages(getattr(package, "__path__", None) or [], f"{top}.", onerror=lambda _: None):
            parts = info.name.split(".")
            if "__main__" in parts or any(part in ("tests", "test", "conftest") for part in parts):
                continue
            module = _imported(info.name)
            if module is not None:
                found.append(module)
    return found


def _deeper_class_home(packages: list[str], name: str) -> list[str]:
    """The public module nearest the top that offers a class of the library's own under this name, at any depth
    (`lib.extensions.image` for an image extension): a class name is the library's, never the reader's stand-in.
    Other names that deep (`main`, `data`) name the reader's objects too often to be looked up there."""
    if not name[:1].isupper():
        return []
    homes = [
        module.__name__
        for module in _submodules(packages)
        if not any(part.startswith("_") for part in module.__name__.split("."))
        and isinstance(value := getattr(module, name, None), type)
        and value.__module__.split(".")[0] in packages
    ]
    return sorted(homes, key=lambda home: (home.count("."), home))[:1]


# Names of the standard library's everyday modules that a reader of Python knows where to import from (`Path`,
# `Enum`, `dataclass`, `partial`) and never takes for their own: one of them never imported is an import away.
# Other names of those modules (`add`, `load`, `Event`, `Context`) name the reader's or another library's objects
# too often to be looked up there.
EVERYDAY_NAMES = {
    **dict.fromkeys(("Path", "PurePath", "PosixPath"), "pathlib"),
    **dict.fromkeys(("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "auto", "unique"), "enum"),
    **dict.fromkeys(("dataclass", "field", "fields", "asdict", "astuple", "make_dataclass"), "dataclasses"),
    **dict.fromkeys(("OrderedDict", "Counter", "ChainMap", "namedtuple", "defaultdict", "deque"), "collections"),
    **dict.fromkeys(("partial", "wraps", "reduce", "lru_cache", "cached_property"), "functools"),
    **dict.fromkeys(("singledispatch", "total_ordering"), "functools"),
    **dict.fromkeys(("contextmanager", "asynccontextmanager", "suppress", "ExitStack", "AsyncExitStack"), "contextlib"),
    **dict.fromkeys(("islice", "groupby", "zip_longest"), "itertools"),
    **dict.fromkeys(("itemgetter", "attrgetter"), "operator"),
    **dict.fromkeys(("ABC", "ABCMeta", "abstractmethod"), "abc"),
    **dict.fromkeys(("StringIO", "BytesIO"), "io"),
    **dict.fromkeys(("timedelta", "timezone"), "datetime"),
    **dict.fromkeys(("UUID", "uuid4"), "uuid"),
    **dict.fromkeys(("Popen", "CalledProcessError"), "subprocess"),
    "Decimal": "decimal",
    "Fraction": "fractions",
    "Thread": "threading",
    "Queue": "queue",
    "ZoneInfo": "zoneinfo",
    "deepcopy": "copy",
    "dedent": "textwrap",
    "pprint": "pprint",
    "proxy": "weakref",
}


def _exports(module_name: str, name: str) -> bool:
    """The module offers the name itself: a submodule it happens to have imported is no name to import from it."""
    if not _importable(module_name) or not _has(module_name, name):
        return False
    return not _is_module(getattr(sys.modules[module_name], name, None))


# Python's constants, which a reader used to YAML or JSON may write in lowercase (`none`, `true`).
PYTHON_CONSTANTS = ("None", "True", "False")


def _slip_of(name: str, offered: dict[str, str]) -> str | None:
    """What the name is a slip of, as `module.name` (a constant by its name): a constant in another case, a name
    with its words in another order (`string_lower` for `lower_string`), or, from eight characters, one letter
    added, dropped, changed or swapped (`indentifier` for `identifier`). A plural, a number, another case or a
    short name tells a reader's own object from the library's too often to be a slip."""
    constant = next((c for c in PYTHON_CONSTANTS if name.lower() == c.lower() and name != c), None)
    if constant:
        return constant
    words = sorted(name.split("_"))
    for candidate, module in offered.items():
        # An object named after its class (`response` for `Response`) is the reader's own, no slip.
        if candidate.lower() == name.lower() or any(character.isdigit() for character in name + candidate):
            continue
        swapped = len(words) > 1 and sorted(candidate.split("_")) == words
        if swapped or (len(name) >= 8 and _one_edit(name, candidate)):
            return f"{module}.{candidate}"
    return None


def _one_edit(a: str, b: str) -> bool:
    """One letter added, dropped, changed, or two neighbours swapped; a plural `s` is no slip."""
    if len(a) == len(b):
        differ = [i for i in range(len(a)) if a[i] != b[i]]
        swapped = len(differ) == 2 and differ[1] == differ[0] + 1 and a[differ[0]] == b[differ[1]]
        return len(differ) == 1 or (swapped and a[differ[1]] == b[differ[0]])
    short, long = sorted((a, b), key=len)
    if len(long) - len(short) != 1 or long == short + "s":
        return False
    at = next((i for i in range(len(short)) if short[i] != long[i]), len(short))
    return short[at:] == long[at + 1 :]


def _close(name: str, candidates: Iterable[object]) -> list[str]:
    public = [c for c in candidates if isinstance(c, str) and not c.startswith("_")]
    return difflib.get_close_matches(name, public, n=1, cutoff=0.8)


def main() -> None:
    global OUTPUT_CAP
    start = json.loads(sys.stdin.readline())
    OUTPUT_CAP = int(start.get("output_cap", OUTPUT_CAP))
    os.chdir(start.get("cwd") or os.getcwd())
    sys.path.insert(0, os.getcwd())
    page = Page(start)
    # Imported once the forwarders stand in for sys.stdout and sys.stderr: what a library keeps of them at import
    # (a logger's default handler) writes where the page's output goes now, as the reader's own import would.
    page.stdout.target = page.stderr.target = io.StringIO()
    for module in start.get("preload", []):
        try:
            importlib.import_module(module)
        except BaseException:
            pass
    page.stdout.target = page.stderr.target = None
    lines = sys.__stdin__
    assert lines is not None, "its requests come on stdin"
    page.protocol.write(json.dumps({"status": "ready"}) + "\n")
    page.protocol.flush()
    for line in lines:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            answer = page.handle(request)
        except BaseException as exc:
            answer = {"status": "internal", "message": f"{type(exc).__name__}: {_safe_str(exc)}"}
        page.protocol.write(json.dumps(answer, default=repr) + "\n")
        page.protocol.flush()


if __name__ == "__main__":
    main()
