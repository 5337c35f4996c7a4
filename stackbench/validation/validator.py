"""Code-example validation: every example of a doc page runs the way its reader would run it, in a sandbox whose
virtualenv holds the exact library version, deterministically and without a model.

Per page: one sandbox. Its virtualenv gets the library pinned (with the extras the page's own `pip install`
lines name), the page's other `pip install` lines, and a distribution for each module the runnable examples
import that is not there yet; each install that fails is one setup problem of the page, and only the examples
that need it fail for it. Then one page runner (page_runner.py) follows the page in order: hidden doctest setup,
doctest sessions run by the standard doctest runner and compared statement by statement, scripts in a fork each
(with the earlier scripts they build on), the page's `export` lines and the files it shows written before the
examples after them. verdicts.py decides what each outcome means."""

import json
import os
import re
import selectors
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO

from packaging.requirements import InvalidRequirement, Requirement

from stackbench.docs import python_code
from stackbench.docs.distributions import distribution_for, module_names_of, normalized
from stackbench.formats.results import (
    ExampleResult,
    SetupProblem,
    ValidationEnvironment,
    ValidationResult,
    ValidationSummary,
    validation_file_name,
)
from stackbench.formats.walkthrough import RUNNABLE_STYLES as RUN_STYLES
from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis
from stackbench.lib.clock import utcnow
from stackbench.lib.jsonfiles import FormatError, load_model, write_model
from stackbench.sandbox.capture import read_capped
from stackbench.sandbox.prerequisites import SandboxUnavailable
from stackbench.sandbox.reader import TOOLS
from stackbench.sandbox.sandbox import open_sandbox
from stackbench.sandbox.settings import Profile, SandboxSettings
from stackbench.sandbox.watch import Watch
from stackbench.validation import verdicts

INSTALL_TIMEOUT = 600
LEGACY_SKIP_REASON = "Example marked as not executable"
RUNNER_SOURCE = (Path(__file__).parent / "page_runner.py").read_text()
RUNNER_GRACE = 15.0  # beyond an example's own time limit, before the runner itself is deemed stuck
ANSWER_LIMIT = 64 * 1024**2  # one answer of the page runner (its outputs are capped well below this)
NOT_FOUND = re.compile(
    r"not found in the package registry|No matching distribution found|Could not find a version that satisfies|"
    r"404 Not Found|was not found in the provided package locations",
    re.IGNORECASE,
)
WRONG_PYTHON = re.compile(
    r"Requires-Python|does not satisfy Python|requires a different Python|(?:requires|depends on) Python\s*[<>=!~]",
    re.IGNORECASE,
)
PROBE = r"""
import importlib.util, json, sys
from importlib import metadata
wanted = json.loads(sys.argv[1])
found = {}
for module in wanted["modules"]:
    try:
        found[module] = importlib.util.find_spec(module) is not None
    except Exception:
        found[module] = False
library = wanted["library"]
try:
    requires = metadata.requires(library) or []
except metadata.PackageNotFoundError:
    requires = []
tops = sorted({top for top, dists in metadata.packages_distributions().items()
               if any(d.lower().replace("_", "-") == library.lower().replace("_", "-") for d in dists)})
print(json.dumps({"found": found, "requires": requires, "library_modules": tops}))
"""


class ValidationError(Exception):
    """Validation could not run at all; the message says why."""


@dataclass
class ValidationOptions:
    timeout: float = 30.0
    num_workers: int = field(default_factory=lambda: os.cpu_count() or 2)
    find_links: list[Path] = field(default_factory=list)
    offline: bool = False
    output_cap: int = 100_000
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    other_profiles: list[Profile] = field(default_factory=list)  # other Pythons to try, in order


class ValidationObserver:
    def document_started(self, page: str, examples: int): ...

    def sandbox_ready(self, description: dict): ...

    def example_finished(self, page: str, result: ExampleResult): ...

    def document_finished(self, page: str, result: ValidationResult): ...

    def should_stop(self) -> bool:
        return False


@dataclass
class Install:
    ok: bool
    message: str
    seconds: float
    tool: str
    log: str = ""
    not_found: bool = False  # the index has no such package (as opposed to: it would not install)
    wrong_python: bool = False  # it does not support this Python (its Requires-Python)


# -- what the page needs ------------------------------------------------------------------------------------------
def _checked(spec: str, page: str) -> Requirement:
    try:
        requirement = Requirement(spec)
    except InvalidRequirement:
        raise ValidationError(f"{page}: {spec!r} is not a valid package requirement") from None
    if requirement.url or spec.strip().startswith("-"):
        raise ValidationError(f"{page}: {spec!r} is not a plain package requirement")
    return requirement


def library_requirement(analysis: ExtractionAnalysis) -> str:
    """The library pinned to its version, with every extra the page's own install lines name."""
    extras: set[str] = set()
    for wanted in analysis.requirements:
        requirement = _checked(wanted.requirement, analysis.page)
        if normalized(requirement.name) == normalized(analysis.library):
            extras |= requirement.extras
    name = analysis.library + (f"[{','.join(sorted(extras))}]" if extras else "")
    spec = f"{name}=={analysis.version}" if analysis.version else name
    _checked(spec, analysis.page)
    return spec


def page_requirements(analysis: ExtractionAnalysis) -> list[str]:
    """Other packages the page installs, and those runnable examples list as their dependencies (files of the
    existing tools name them there); never from examples that are not run."""
    wanted: dict[str, str] = {}
    specs = [r.requirement for r in analysis.requirements]
    specs += [dep for example in analysis.examples if _runnable(example) for dep in example.dependencies]
    for spec in specs:
        requirement = _checked(spec, analysis.page)
        key = normalized(requirement.name)
        if key != normalized(analysis.library) and key not in wanted:
            wanted[key] = spec
    return list(wanted.values())


def requirements_for(analysis: ExtractionAnalysis) -> list[str]:
    """Everything the page installs before its examples run (checked: a requirement that is not a plain package
    is refused, so nothing in an analysis file can pass options to the installer)."""
    return [library_requirement(analysis), *page_requirements(analysis)]


def _runnable(example: CodeExample) -> bool:
    return example.execution_context != "not_executable"


def style_of(example: CodeExample) -> str:
    """The extractor says; for files of the existing tools, the code does."""
    if example.style:
        return example.style
    return "doctest" if python_code.is_session(example.code) else "script"


def source_of(example: CodeExample) -> str:
    return python_code.session_source(example.code) if style_of(example) == "doctest" else example.code


# -- the sandbox --------------------------------------------------------------------------------------------------
class DocumentSandbox:
    """One document's machine: a sandbox whose reader virtualenv gets the library, and the page runner."""

    def __init__(self, options: ValidationOptions, label: str, should_stop=lambda: False):
        self.options = options
        self.should_stop = should_stop
        self.sandbox = open_sandbox(options.sandbox, f"validate_{label}", read_only=options.find_links)
        self.python = f"{self.sandbox.home}/.venv/bin/python"
        self.runner_path = f"{self.sandbox.state}/page_runner.py"
        self.sandbox.write_file(self.runner_path, RUNNER_SOURCE)

    def _run(self, command: list[str], timeout: float, cwd: str | None = None, env: dict | None = None):
        """(exit status, output, timed out) of a setup command (output to the worker's own file, out of the
        sandbox's reach: a flood costs no memory, and it reads back only what the command printed)."""
        watch = Watch(self.sandbox, timeout, self.should_stop)
        with self.sandbox.private_file("setup") as log:
            spawned = self.sandbox.spawn(
                command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
            stop = None
            while spawned.popen.poll() is None:
                stop = watch.interruption()
                if stop:
                    spawned.kill()
                    break
                time.sleep(0.05)
            spawned.popen.wait()
            self.sandbox.kill_strays()
            output, _ = read_capped(log.fileno(), self.options.output_cap)
        return (None if stop else spawned.popen.returncode), output, stop == "timeout"

    def install(self, requirements: list[str]) -> Install:
        started = time.monotonic()
        uv = "uv" in self.sandbox.settings.tools
        links = [arg for folder in self.sandbox.read_only for arg in ("--find-links", folder)]
        offline = ["--no-index"] if self.options.offline else []
        if uv:
            command = [
                f"{TOOLS}/uv",
                "pip",
                "install",
                "--quiet",
                "--python",
                self.python,
                *links,
                *offline,
                *requirements,
            ]
            env = {**self.sandbox.environment, "UV_CACHE_DIR": f"{self.sandbox.home}/.cache/uv"}
        else:
            command = [self.python, "-m", "pip", "install", "--quiet", *links, *offline, *requirements]
            env = None
        code, output, timed_out = self._run(command, INSTALL_TIMEOUT, cwd=self.sandbox.home, env=env)
        tool = "uv" if uv else "pip"
        if code == 0:
            return Install(True, "", time.monotonic() - started, tool)
        log = f"timed out after {INSTALL_TIMEOUT} s" if timed_out else output[-4000:].strip()
        return Install(
            False,
            f"Installing {' '.join(requirements)} failed",
            time.monotonic() - started,
            tool,
            log,
            bool(NOT_FOUND.search(output)),
            bool(WRONG_PYTHON.search(output)),
        )

    def probe(self, modules: list[str], library: str) -> dict:
        """Which modules import, what the library requires (with its extras) and which modules it provides."""
        payload = json.dumps({"modules": modules, "library": library})
        code, output, _ = self._run([self.python, "-c", PROBE, payload], 60, cwd=self.sandbox.home)
        try:
            return json.loads(output.strip().splitlines()[-1]) if code == 0 else {}
        except (ValueError, IndexError):
            return {}

    def readable(self, text: str) -> str:
        """Sandbox paths mean nothing to a reader: show site-packages/... instead."""
        return re.sub(
            re.escape(f"{self.sandbox.home}/.venv/lib/") + r"python[\d.]+/site-packages/", "site-packages/", text
        )

    def close(self):
        self.sandbox.close()


class PageProcess:
    """The page runner inside the sandbox, and the way back when it gets stuck: a request that overruns its time
    (or a runner that dies) ends the sandbox's processes and starts a new runner that replays what the page had
    set up so far, so the examples after it still run."""

    def __init__(self, document: DocumentSandbox, start: dict, should_stop):
        self.document, self.start_message, self.should_stop = document, start, should_stop
        self.replay: list[dict] = []
        self.popen = None
        self.stderr: BinaryIO | None = None
        self.buffer = bytearray()
        self._launch()

    def _launch(self):
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
        self.buffer = bytearray()
        answer = self._exchange(self.start_message, timeout=120)
        if answer.get("status") != "ready":
            raise ValidationError(f"the page runner did not start: {self._stderr_tail()}")
        for request in self.replay:
            self._exchange(request, timeout=request.get("timeout", 30) + RUNNER_GRACE)

    def _stderr_tail(self) -> str:
        printed, _ = read_capped(self.stderr.fileno(), 8000)
        return printed[-2000:].strip() or "no output"

    def request(self, request: dict, timeout: float, remember: bool = False) -> dict:
        answer = self._exchange(request, timeout + RUNNER_GRACE)
        if answer.get("status") == "died":
            # Killed from outside (an install ends the sandbox's strays): once more, on a new runner.
            self.restart()
            answer = self._exchange(request, timeout + RUNNER_GRACE)
        if answer.get("status") in ("stuck", "died", "process_limit", "disk_limit"):
            self.restart()
        else:
            # Nothing an example starts may outlive it (a daemon, a detached fork bomb): only the runner stays.
            self.document.sandbox.kill_strays(keep={self.spawned.pid})
            if self.popen.poll() is not None:
                self._launch()
            if remember:
                self.replay.append(request)
        return answer

    def restart(self):
        self.document.sandbox.kill_processes()
        self._launch()

    def _exchange(self, request: dict, timeout: float) -> dict:
        try:
            self.popen.stdin.write((json.dumps(request) + "\n").encode())
            self.popen.stdin.flush()
        except (BrokenPipeError, OSError):
            return {"status": "died", "message": self._stderr_tail()}
        watch = Watch(self.document.sandbox, timeout, self.should_stop)
        selector = selectors.DefaultSelector()
        selector.register(self.popen.stdout, selectors.EVENT_READ)
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
                if selector.select(timeout=0.05):
                    chunk = os.read(self.popen.stdout.fileno(), 1 << 16)
                    if not chunk:
                        return {"status": "died", "message": self._stderr_tail()}
                    answered = b"\n" in chunk
                    if not answered and len(self.buffer) + len(chunk) > ANSWER_LIMIT:
                        # The page's code can write to the runner's pipe: a flood must not cost unbounded memory.
                        self.buffer.clear()
                        return {"status": "died", "message": "the page's code flooded the runner's answers"}
                    self.buffer += chunk
        finally:
            selector.close()
        line, _, rest = self.buffer.partition(b"\n")
        self.buffer = bytearray(rest)
        try:
            return json.loads(line)
        except ValueError:
            return {"status": "died", "message": line[:500].decode(errors="replace")}

    def close(self):
        if self.popen is not None and self.popen.poll() is None:
            try:
                self.popen.stdin.close()
            except OSError:
                pass
            self.spawned.kill()
            self.popen.wait()
        if self.stderr is not None:
            self.stderr.close()


# -- the page -----------------------------------------------------------------------------------------------------
@dataclass
class PageState:
    """What happened so far, example by example."""

    results: dict[int, ExampleResult] = field(default_factory=dict)
    broken: set[int] = field(default_factory=set)  # examples that stopped on an exception, a timeout or an exit
    materialized: set[int] = field(default_factory=set)
    done_setup: set[int] = field(default_factory=set)
    applied_variables: set[int] = field(default_factory=set)
    written_files: set[int] = field(default_factory=set)
    unwritable_files: list[str] = field(default_factory=list)
    dirty: bool = False  # the page's process holds more than its hidden setup: what ran before may interfere
    tried_optional: set[str] = field(default_factory=set)


class PageValidation:
    """One page followed in order, as its reader would."""

    def __init__(self, analysis: ExtractionAnalysis, options: ValidationOptions, observer: ValidationObserver):
        self.analysis, self.options, self.observer = analysis, options, observer
        self.examples = analysis.examples
        self.trees = [python_code.parse(source_of(e)) if style_of(e) in RUN_STYLES else None for e in self.examples]
        self.defines = [
            python_code.defined_names(t) if t is not None else _names_in(e)
            for t, e in zip(self.trees, self.examples, strict=True)
        ]
        self.setup_defines = set().union(*(_defined_by(s.code) for s in analysis.setup))
        self.state = PageState()
        self.setup_problems: list[SetupProblem] = []
        self.environment: ValidationEnvironment | None = None
        self.knowledge = verdicts.PageKnowledge(analysis.library, analysis.version or "")
        self.base_failed: Install | None = None
        self.document: DocumentSandbox | None = None
        self.process: PageProcess | None = None
        # Modules the page itself shows as files (hello.py): the reader's own, never looked up on an index.
        self.page_modules = {Path(f.path).stem if f.path.endswith(".py") else "" for f in analysis.files} | {
            Path(f.path).parent.name for f in analysis.files if f.path.endswith("/__init__.py")
        }

    @property
    def runnable(self) -> list[int]:
        return [i for i, e in enumerate(self.examples) if _runnable(e) and style_of(e) in RUN_STYLES]

    # -- setting the machine up --------------------------------------------------------------------------------
    def prepare(self, document: DocumentSandbox):
        self.document = document
        analysis = self.analysis
        base = document.install([library_requirement(analysis)])
        if not base.ok:
            self.base_failed = base
            python = document.sandbox.settings.profile.python_version
            message = base.message + (f": it does not support Python {python}" if base.wrong_python else "")
            self.setup_problems.append(
                SetupProblem(
                    requirement=library_requirement(analysis), message=message, log=document.readable(base.log)
                )
            )
        others = page_requirements(analysis)
        failed_by_page: dict[str, str] = {}
        if others and not document.install(others).ok:
            for requirement in others:
                if self._install_one(requirement, source="the page's install lines", guessed=False) != "installed":
                    failed_by_page[normalized(Requirement(requirement).name)] = requirement
        modules = self._imported_modules()
        probe = document.probe(modules, analysis.library)
        found = probe.get("found", {})
        own = normalized(analysis.library).replace("-", "_")
        self.knowledge.library_modules = sorted(
            probe.get("library_modules") or module_names_of(analysis.library), key=lambda m: (m != own, m)
        )
        self.extras = _extras_by_distribution(probe.get("requires", []))
        wanted: dict[str, list[str]] = {}
        for module in modules:
            distribution = distribution_for(module)
            if module.split(".")[0] in self.page_modules:
                self.knowledge.modules[module] = ("page", "")
            elif distribution and normalized(distribution) in failed_by_page:
                self.knowledge.modules[module] = ("failed", failed_by_page[normalized(distribution)])
            elif found.get(module):
                self.knowledge.modules[module] = ("installed", distribution or "")
            elif distribution and not self.knowledge.is_library_module(module):
                wanted.setdefault(self._requirement_for(module, distribution), []).append(module)
        if not wanted:
            return
        if document.install(list(wanted)).ok:
            states = dict.fromkeys(wanted, "installed")
        else:
            states = {
                requirement: self._install_one(requirement, source=f"imported as `{'`, `'.join(needing)}`")
                for requirement, needing in wanted.items()
            }
        # A distribution of the expected name that does not provide the module is somebody else's package.
        still = document.probe([m for needing in wanted.values() for m in needing], analysis.library).get("found", {})
        for requirement, needing in wanted.items():
            for module in needing:
                state = states[requirement]
                if state == "installed" and not still.get(module, False):
                    state = "unpublished"
                self.knowledge.modules[module] = (state, requirement)

    def _requirement_for(self, module: str, distribution: str) -> str:
        """The library's own extra when it brings the distribution (its pin fits the library), else the
        distribution itself."""
        extra = self.extras.get(normalized(distribution))
        if not extra:
            return distribution
        self.knowledge.extras[module.split(".")[0]] = extra
        version = f"=={self.analysis.version}" if self.analysis.version else ""
        return f"{self.analysis.library}[{extra}]{version}"

    def _install_one(self, requirement: str, source: str, guessed: bool = True) -> str:
        """Install one requirement: installed, unpublished (a guessed name the index does not have: the
        reader's own module) or failed (a setup problem of the page)."""
        done = self.document.install([requirement])
        if done.ok:
            return "installed"
        if done.not_found and guessed:
            return "unpublished"
        self.setup_problems.append(
            SetupProblem(
                requirement=requirement, message=f"{done.message} ({source})", log=self.document.readable(done.log)
            )
        )
        return "failed"

    def _imported_modules(self) -> list[str]:
        modules: list[str] = []
        for index in self.runnable:
            for module in python_code.imported_modules(self.trees[index]):
                if module not in modules:
                    modules.append(module)
        return modules

    def _start_message(self) -> dict:
        return {
            "cwd": self.document.sandbox.work,
            "library_modules": self.knowledge.library_modules,
            "preload": self.knowledge.library_modules,
            "output_cap": self.options.output_cap,
        }

    # -- following the page ------------------------------------------------------------------------------------
    def run(self, should_stop) -> list[ExampleResult]:
        results = []
        try:
            if self.runnable and self.base_failed is None:
                self.process = PageProcess(self.document, self._start_message(), should_stop)
                self._record_environment()
                for number, setup in enumerate(self.analysis.setup):
                    if setup.line == 0 or setup.source != self.analysis.page:
                        self._apply_setup(number, self.process)
            for index, example in enumerate(self.examples):
                if should_stop():
                    break
                if self.process is not None:
                    self._catch_up(example.line, self.process)
                result = self._validate(index)
                self.state.results[index] = result
                results.append(result)
                self.observer.example_finished(self.analysis.page, result)
                if result.status == "success" and style_of(example) != "doctest" and self._sessions_after(index):
                    self._materialize(index, self.process)
        finally:
            if self.process is not None:
                self.process.close()
        return results

    def _record_environment(self):
        environment = self.process.request({"op": "environment"}, 60)
        if environment.get("status") == "ok":
            self.environment = ValidationEnvironment(
                python=environment["python"], distributions=environment["distributions"]
            )
            self.knowledge.python = environment["python"]

    def _sessions_after(self, index: int) -> bool:
        return any(style_of(e) == "doctest" and _runnable(e) for e in self.examples[index + 1 :])

    def _apply_setup(self, number: int, process: "PageProcess"):
        setup = self.analysis.setup[number]
        self.state.done_setup.add(number)
        process.request(
            {"op": "setup", "name": f"{setup.source or 'setup'}:{setup.line}", "code": setup.code},
            self.options.timeout,
            remember=True,
        )

    def _catch_up(self, line: int, process: "PageProcess"):
        """What the reader did on the page before this line, in page order: the docs' hidden setup, the
        variables the page exports, the files it shows."""
        for number, setup in enumerate(self.analysis.setup):
            if number not in self.state.done_setup and setup.line < line:
                self._apply_setup(number, process)
        fresh = {}
        for number, variable in enumerate(self.analysis.environment):
            if variable.line < line and number not in self.state.applied_variables:
                self.state.applied_variables.add(number)
                fresh[variable.name] = variable.value
        if fresh:
            process.request({"op": "environ", "variables": fresh}, 10, remember=True)
        sandbox = self.document.sandbox
        for number, page_file in enumerate(self.analysis.files):
            if page_file.line >= line or number in self.state.written_files:
                continue
            self.state.written_files.add(number)
            path = page_file.path
            inside = sandbox.home + path[1:] if path.startswith("~") else path
            inside = inside if inside.startswith("/") else f"{sandbox.work}/{inside}"
            try:
                sandbox.write_file(os.path.normpath(inside), page_file.content)
            except OSError:
                self.state.unwritable_files.append(path)

    def _materialize(self, index: int, process: "PageProcess"):
        """A script that passed joins the page's process, so the sessions after it see what it did."""
        example = self.examples[index]
        self.state.materialized.add(index)
        self.state.dirty = True
        process.request(
            {
                "op": "materialize",
                "name": _script_name(example, index),
                "code": example.code,
                "timeout": self.options.timeout,
            },
            self.options.timeout,
            remember=True,
        )

    def _validate(self, index: int) -> ExampleResult:
        example = self.examples[index]
        base = {"example_index": index, "line": example.line, "context": example.context, "code": example.code}
        style = style_of(example)
        if not _runnable(example) or style not in RUN_STYLES:
            reason = example.skip_reason or (
                LEGACY_SKIP_REASON if not _runnable(example) else f"Not Python ({example.language})"
            )
            return ExampleResult(**base, status="skipped", error_message=reason, actual_code_executed=example.code)
        if example.language and example.language.lower() not in ("python", "py", "python3", "pycon", ""):
            return ExampleResult(
                **base,
                status="skipped",
                error_message=f"Not Python ({example.language})",
                actual_code_executed=example.code,
            )
        depends = python_code.dependencies(index, self.trees)
        common = {
            **base,
            "depends_on_previous": bool(depends),
            "depends_on_example_indices": depends,
            "actual_code_executed": example.code,
        }
        if self.base_failed is not None:
            return ExampleResult(
                **common,
                status="failure",
                severity="warning",
                error_message=f"{self.base_failed.message}: {self.base_failed.log[-600:]}",
                suggestions="The library could not be installed at this version, so no example of the page could "
                "run; see the page's setup problems.",
            )
        blocked = self._blocked_by(depends)
        if blocked:
            return ExampleResult(**common, status="skipped", error_message=blocked)
        self._know_names_around(index)
        if style == "doctest":
            return self._session(index, common)
        return self._script(index, common, depends)

    def _blocked_by(self, depends: list[int]) -> str | None:
        """An example that builds on one that broke off (what it defines may not exist) or was not run is not
        run either: a failure is counted once, where it happened. One whose output merely differed still
        defined everything, so what builds on it runs."""
        for earlier in depends:
            line = self.examples[earlier].line
            if earlier in self.state.broken:
                return f"Builds on example {earlier} (line {line}), which failed; counted there."
            result = self.state.results.get(earlier)
            if result is not None and result.status == "skipped":
                reason = (result.error_message or "").rstrip(".")
                return f"Builds on example {earlier} (line {line}), which is not run ({reason})."
        return None

    def _know_names_around(self, index: int):
        """For the verdicts: which names other examples define, and how those examples fared."""
        knowledge = self.knowledge
        knowledge.defined_later, knowledge.defined_by_failed, knowledge.defined_by_skipped = {}, {}, {}
        knowledge.unresolved = []
        for other in range(len(self.examples) - 1, index, -1):
            for name in self.defines[other]:
                knowledge.defined_later[name] = (other, self.examples[other].line)
        for other in range(index):
            result = self.state.results.get(other)
            for name in self.defines[other]:
                knowledge.defined_by_failed.pop(name, None)
                knowledge.defined_by_skipped.pop(name, None)
                if other in self.state.broken:
                    knowledge.defined_by_failed[name] = (other, self.examples[other].line)
                elif result is not None and result.status == "skipped":
                    reason = (result.error_message or "").rstrip(".") + "."
                    knowledge.defined_by_skipped[name] = (other, self.examples[other].line, reason)

    def _free_names(self, index: int) -> list[str]:
        """Names the example uses that nothing on the page before it defines."""
        tree = self.trees[index]
        if tree is None:
            return []
        earlier = set(self.setup_defines).union(*self.defines[:index]) if index else set(self.setup_defines)
        return sorted(python_code.undefined_names(tree) - earlier)

    def _explain_names(self, index: int, verdict_exception: dict, process: "PageProcess"):
        """Before blaming a missing import, look at every name the example leaves undefined: one that nothing
        provides (no page example, no module, not the library) makes the example an illustration."""
        free = [n for n in self._free_names(index) if n != verdict_exception.get("name")]
        if not free:
            return
        answer = process.request({"op": "resolve", "names": free}, 30)
        resolved = answer.get("names", {})
        self.knowledge.unresolved = [
            name
            for name in free
            if name in resolved
            and not any(resolved[name].values())
            and name not in self.knowledge.defined_later
            and name not in self.knowledge.defined_by_failed
            and name not in self.knowledge.defined_by_skipped
        ]

    # -- sessions ----------------------------------------------------------------------------------------------
    def _session(self, index: int, common: dict) -> ExampleResult:
        example = self.examples[index]
        request = self._session_request(index)
        answer = self.process.request(request, self.options.timeout)
        verdict, expected, output = self._session_verdict(index, answer)
        if verdict.status == "failure":
            retried = {}

            def rerun():
                retried["answer"] = self.process.request(request, self.options.timeout)
                retried["verdict"] = self._session_verdict(index, retried["answer"])
                return retried["verdict"][0], retried["answer"]

            verdict, answer = self._with_optional_dependency(verdict, answer, rerun)
            if retried:
                _, expected, output = retried["verdict"]
        if verdict.status == "failure" and self.state.dirty:
            verdict, expected, output, answer = self._fresh_session(index, (verdict, expected, output, answer))
        verdict = self._unless_unwritable_file(index, verdict)
        self.state.dirty = True
        if answer.get("status") == "ok":
            self.process.replay.append(request)
        if verdict.status == "failure" and any(f.get("exception") for f in answer.get("failures", [])):
            self.state.broken.add(index)
        statements = answer.get("statements", python_code.session_statements(example.code))
        return ExampleResult(
            **common,
            status=verdict.status,
            severity=verdict.severity,
            error_message=verdict.message,
            suggestions=verdict.suggestion,
            execution_output=self.document.readable(output) or None,
            expected_output=expected,
            statements=statements,
            statements_run=answer.get("ran", 0),
        )

    def _session_request(self, index: int) -> dict:
        example = self.examples[index]
        prefix, session = python_code.session_parts(example.code) or ("", example.code)
        before = prefix.count("\n") + 1 if prefix else 0
        return {
            "op": "session",
            "name": f"{self.analysis.page}:{example.line}",
            "prefix": prefix,
            "line": max(example.line - 1 + before, 0),
            "text": session,
            "timeout": self.options.timeout,
        }

    def _session_verdict(self, index: int, answer: dict):
        """(verdict, expected output, what it printed): the first statement whose failure is a finding; a failure
        that only differs in format is noted unless a real one follows; an illustration skips the session."""
        status = answer.get("status")
        if status in ("timeout", "stuck"):
            return _still_running(self.options.timeout), None, answer.get("output", "")
        if status != "ok":
            return _runner_trouble(answer), None, answer.get("output", "")
        failures = answer.get("failures", [])
        noted = None
        for number, failure in enumerate(failures):
            where = f"line {failure['line'] + 1}"
            shown = f">>> {failure['source'].rstrip()}"
            if failure.get("exception"):
                exc = failure["exception"]
                newer = python_code.newer_syntax(failure["source"]) if exc["type"] == "SyntaxError" else None
                if newer:
                    verdict = verdicts.Verdict("skipped", None, _needs_newer_python(newer))
                elif _shows_exception(failure["want"], exc):
                    verdict = verdicts.SUCCESS  # the page shows the traceback (in a form doctest cannot read)
                else:
                    verdict = self._judge(index, exc, where)
                printed, expected = f"{shown}\n{exc.get('traceback', '')}", None
            elif failure.get("expects_exception") and _same_exception(failure["want"], failure["got"]):
                verdict = verdicts.Verdict(
                    "success",
                    "info",
                    f"The exception's message differs from the page's ({where}); its type is the same.",
                )
                printed, expected = f"{shown}\n{failure['got']}", failure["want"]
            else:
                verdict = verdicts.judge_output(failure["want"], failure["got"], where)
                printed, expected = f"{shown}\n{failure['got']}", failure["want"]
            if verdict.status == "failure":
                later = len(failures) - number - 1
                if later:
                    verdict.message += f" ({later} later statement(s) of the session failed too.)"
                return verdict, expected, printed
            if verdict.status == "skipped":
                return verdict, None, printed
            noted = noted or (verdict, expected, printed)
        if noted:
            return noted
        return verdicts.judge_warnings(_docs_warnings(answer)), None, answer.get("output", "")

    def _fresh_session(self, index: int, first):
        """A session that failed after the page's earlier examples gets a second chance on its own: a new process
        with the hidden setup, the scripts of its section and what it builds on. Docs often mean each section
        as a program of its own (logging configured anew, say); only a failure that stays is a finding."""
        fresh = self._fresh_process(index)
        if fresh is None:
            return first
        try:
            answer = fresh.request(self._session_request(index), self.options.timeout)
            verdict, expected, output = self._session_verdict(index, answer)
        finally:
            fresh.close()
        if verdict.status == "failure":
            return first  # it fails either way: as the reader following the page sees it
        note = verdicts.Verdict(
            "success",
            "info",
            "It passes when its section runs on its own, but not after the "
            f"page's earlier examples: {first[0].message}",
            first[0].suggestion,
        )
        return note, first[1], first[2], answer

    def _fresh_process(self, index: int) -> "PageProcess | None":
        """A second page process holding what a reader starting at this section would have run."""
        section = [
            i
            for i in range(self._previous_session(index) + 1, index)
            if style_of(self.examples[i]) != "doctest"
            and self.state.results.get(i) is not None
            and self.state.results[i].status == "success"
            and style_of(self.examples[i]) in RUN_STYLES
        ]
        wanted = sorted(set(section) | set(python_code.dependencies(index, self.trees)))
        try:
            fresh = PageProcess(self.document, self._start_message(), self.process.should_stop)
        except ValidationError:
            return None
        for request in self.process.replay:
            if request["op"] in ("setup", "environ"):
                fresh.request(request, request.get("timeout", 30))
        for earlier in wanted:
            if earlier in self.state.broken or self.state.results.get(earlier) is None:
                continue
            if style_of(self.examples[earlier]) == "doctest":
                fresh.request(self._session_request(earlier), self.options.timeout)
            else:
                fresh.request(
                    {
                        "op": "materialize",
                        "name": _script_name(self.examples[earlier], earlier),
                        "code": self.examples[earlier].code,
                        "timeout": self.options.timeout,
                    },
                    self.options.timeout,
                )
        return fresh

    def _previous_session(self, index: int) -> int:
        for earlier in range(index - 1, -1, -1):
            if style_of(self.examples[earlier]) == "doctest":
                return earlier
        return -1

    # -- scripts -----------------------------------------------------------------------------------------------
    def _script(self, index: int, common: dict, depends: list[int]) -> ExampleResult:
        example = self.examples[index]
        preludes = [
            {"name": _script_name(self.examples[d], d), "code": self.examples[d].code}
            for d in depends
            if style_of(self.examples[d]) != "doctest" and d not in self.state.materialized
        ]
        executed = "\n\n".join([p["code"].rstrip("\n") for p in preludes] + [example.code.rstrip("\n")]) + "\n"
        common = {**common, "actual_code_executed": executed}
        tree = self.trees[index]
        if tree is None:
            newer = python_code.newer_syntax(example.code)
            shape = python_code.fragment(example.code)
            if newer or shape:
                self.state.broken.add(index)
                reason = _needs_newer_python(newer) if newer else f"A fragment: {shape}."
                return ExampleResult(**common, status="skipped", error_message=reason)
            self.state.broken.add(index)
            return ExampleResult(
                **common,
                status="failure",
                severity="error",
                error_message=_syntax_problem(example.code),
                suggestions="Fix the syntax of the example.",
            )
        request = self._script_request(index, preludes)
        answer = self.process.request(request, self.options.timeout)
        verdict = self._script_verdict(index, answer)
        verdict, answer = self._with_optional_dependency(
            verdict,
            answer,
            lambda: _verdict_of(self._script_verdict, index, self.process.request(request, self.options.timeout)),
        )
        if verdict.status == "failure" and self.state.dirty:
            fresh = self._fresh_process(index)
            if fresh is not None:
                try:
                    retried = fresh.request(self._script_request(index, []), self.options.timeout)
                finally:
                    fresh.close()
                second = self._script_verdict(index, retried)
                if second.status != "failure":
                    verdict = verdicts.Verdict(
                        "success",
                        "info",
                        f"It passes on its own, but not after the page's earlier examples: {verdict.message}",
                        verdict.suggestion,
                    )
                    answer = retried
        verdict = self._unless_unwritable_file(index, verdict)
        if verdict.status == "failure" and answer.get("status") != "ok":
            self.state.broken.add(index)
        output = self.document.readable(answer.get("output", ""))
        expected = self._expected_output(index)
        return ExampleResult(
            **common,
            status=verdict.status,
            severity=verdict.severity,
            error_message=verdict.message,
            suggestions=verdict.suggestion,
            execution_output=output or None,
            expected_output=expected if verdict.severity and expected else None,
        )

    def _script_request(self, index: int, preludes: list[dict]) -> dict:
        example = self.examples[index]
        return {
            "op": "script",
            "name": _script_name(example, index),
            "code": example.code,
            "preludes": preludes,
            "async": example.execution_context == "async" or python_code.awaits_at_top_level(self.trees[index]),
            "timeout": self.options.timeout,
            "state": self.document.sandbox.state,
            "record_prints": bool(self._documented_prints(index)),
        }

    def _expected_output(self, index: int) -> str | None:
        """What the page shows the example printing (for the reader: in the code, or in a block after it)."""
        example = self.examples[index]
        if example.expected_output is not None:
            return example.expected_output
        return python_code.documented_output(example.code, self.trees[index])

    def _documented_prints(self, index: int) -> list[python_code.DocumentedPrint]:
        example = self.examples[index]
        if example.expected_output_line:
            return []  # the page shows the whole output in a block of its own
        return python_code.documented_prints(example.code, self.trees[index])

    def _script_verdict(self, index: int, answer: dict) -> verdicts.Verdict:
        example = self.examples[index]
        expected = self._expected_output(index)
        status = answer.get("status")
        if status in ("timeout", "stuck"):
            return _still_running(self.options.timeout)
        if status == "exit" and answer.get("raised_in") == "package":
            return verdicts.Verdict(
                "skipped",
                None,
                f"A command-line program: run without arguments, it exits "
                f"with status {answer.get('exit')} (its usage). Run it with the arguments it needs.",
            )
        if status == "exit":
            return verdicts.Verdict(
                "failure",
                "error",
                f"The example exits with status {answer.get('exit')}"
                + (f": {answer['message']}" if answer.get("message") else ""),
                "Run the example by hand to see why it stops.",
            )
        if status == "exception":
            exc = answer["exception"]
            frames = [f for f in exc.get("frames", []) if f["where"] == "example"]
            where = f"line {example.line + frames[-1]['lineno'] - 1} of the page" if frames else ""
            if expected and _exception_type(expected) == exc.get("type"):
                return verdicts.SUCCESS  # the page shows this very exception
            return self._judge(index, exc, where)
        if status != "ok":
            return _runner_trouble(answer)
        shown = self._documented_prints(index)
        if shown:
            verdict = _judge_prints(shown, answer.get("prints", []), example)
        elif expected is not None and (answer.get("output", "").strip() or _prints(self.trees[index])):
            verdict = verdicts.judge_output(expected, answer.get("output", ""), _output_place(example))
        else:
            verdict = verdicts.SUCCESS
        if verdict.status != "success" or verdict.severity:
            return verdict
        return verdicts.judge_warnings(_docs_warnings(answer))

    def _judge(self, index: int, exc: dict, where: str) -> verdicts.Verdict:
        if "builtins.NameError" in exc.get("mro", []):
            self._explain_names(index, exc, self.process)
        return verdicts.judge_exception(exc, self.knowledge, where)

    def _with_optional_dependency(self, verdict, answer: dict, rerun):
        """A library that needs an optional package for what the example does says so by failing to import it
        (or by leaving its integration None). The reader installs it and runs again; so does the validator,
        once per package, and a pass then only notes that the page never said to install it. rerun() runs the
        example again: (verdict, answer)."""
        if verdict.status != "failure":
            return verdict, answer
        exceptions = [answer.get("exception")] + [f.get("exception") for f in answer.get("failures", [])]
        module = next(filter(None, (_optional_module(exc) for exc in exceptions if exc)), None)
        distribution = distribution_for(module) if module else None
        if not distribution or module in self.state.tried_optional:
            return verdict, answer
        self.state.tried_optional.add(module)
        requirement = self._requirement_for(module, distribution)
        if self._install_one(requirement, source=f"needed by {self.analysis.library} as `{module}`") != "installed":
            return verdict, answer
        self.process.restart()  # the library was imported without the package: import it anew
        second, retried = rerun()
        if second.status == "failure":
            return second, retried
        return verdicts.Verdict(
            "success",
            "info",
            f"It needs `{requirement}`, which the page does not say to install.",
            f'Tell the reader to `pip install "{requirement}"` before this example.',
        ), retried

    def _unless_unwritable_file(self, index: int, verdict: verdicts.Verdict) -> verdicts.Verdict:
        """A failure of an example that reads a file the page shows, where only the reader's machine can have it
        (/var/run/...: the sandbox's reader, like a reader without root, cannot write there), is no finding."""
        if verdict.status != "failure":
            return verdict
        code = self.examples[index].code
        for path in self.state.unwritable_files:
            folder = os.path.dirname(path.rstrip("/"))
            if path in code or (folder not in ("", "/") and re.search(re.escape(folder) + r"['\"/]", code)):
                return verdicts.Verdict(
                    "skipped",
                    None,
                    f"Needs the reader's environment: the file {path}, which "
                    "the sandbox cannot create. Not a doc defect.",
                )
        return verdict

    # -- the result --------------------------------------------------------------------------------------------
    def result(self, results: list[ExampleResult]) -> ValidationResult:
        for path in self.state.unwritable_files:
            self.setup_problems.append(
                SetupProblem(
                    message=f"The page's file {path} could not be written in the sandbox (outside the reader's "
                    "folders); examples that read it need the reader's machine."
                )
            )
        return ValidationResult(
            page=self.analysis.page,
            library=self.analysis.library,
            version=self.analysis.version or "",
            language=self.analysis.language,
            validation_timestamp=utcnow(),
            results=results,
            environment=self.environment,
            setup_problems=self.setup_problems,
        )


def _defined_by(code: str) -> set[str]:
    tree = python_code.parse(code)
    return python_code.defined_names(tree) if tree is not None else set()


def _names_in(example: CodeExample) -> set[str]:
    """Names an example that is not run would define (parsed leniently: placeholders may break parsing)."""
    tree = python_code.parse(source_of(example))
    return python_code.defined_names(tree) if tree is not None else set()


def _script_name(example: CodeExample, index: int) -> str:
    return f"example_{index}_line_{example.line}.py"


def _prints(tree) -> bool:
    import ast

    return tree is not None and any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
        for node in ast.walk(tree)
    )


def _judge_prints(shown: list[python_code.DocumentedPrint], prints: list, example: CodeExample) -> verdicts.Verdict:
    """Each documented print against what that very print wrote; the worst verdict counts."""
    noted = verdicts.SUCCESS
    for item in shown:
        printed = "".join(text for line, text in prints if item.first_line <= line <= item.last_line)
        verdict = verdicts.judge_output(item.text, printed, f"the print at line {example.line + item.first_line - 1}")
        if verdict.status == "failure":
            return verdict
        if verdict.severity and not noted.severity:
            noted = verdict
    return noted


def _output_place(example: CodeExample) -> str:
    if example.expected_output_line:
        return f"the output at line {example.expected_output_line}"
    return "the output written in the example"


def _exception_type(text: str | None) -> str | None:
    """The exception type a traceback's last line names (`ValueError: ...`, `pkg.Error: ...`)."""
    lines = [line for line in (text or "").strip().split("\n") if line.strip()]
    if not lines or not any("Traceback (most recent call last)" in line for line in lines):
        return None
    match = re.match(r"^([\w.]+)(?::|$)", lines[-1].strip())
    return match.group(1).split(".")[-1] if match else None


def _docs_warnings(answer: dict) -> list[dict]:
    """Warnings the example's own code causes (not those a package raises about itself)."""
    return [
        w
        for w in answer.get("warnings", [])
        if not re.search(r"site-packages|dist-packages|/lib/python\d", w.get("filename") or "")
    ]


def _verdict_of(judge, index: int, answer: dict):
    return judge(index, answer), answer


def _optional_module(exc: dict) -> str | None:
    """The module a library went looking for and did not find (an optional dependency), if that is the failure."""
    if exc.get("none_module"):
        return exc["none_module"].split(".")[-1]
    frames = exc.get("frames") or []
    if "builtins.ModuleNotFoundError" in exc.get("mro", []) and frames and frames[-1]["where"] == "package":
        return exc.get("name")
    return None


def _needs_newer_python(newer: tuple[str, str]) -> str:
    version, what = newer
    return f"Needs Python {version} or newer: it uses {what}. Not a doc defect on the reader's newer Python."


def _shows_exception(want: str, exc: dict) -> bool:
    """The page shows a traceback of this exception, in any form (exception groups, abbreviated frames)."""
    return "Traceback" in want and any(
        re.search(r"\b" + re.escape(name.rsplit(".", 1)[-1]) + r"\b", want)
        for name in exc.get("mro", [exc["type"]])[:1]
    )


def _still_running(timeout: float) -> verdicts.Verdict:
    return verdicts.Verdict(
        "skipped", None, f"It did not finish within {timeout:g} s (a server, or a wait for input): run it by hand."
    )


def _same_exception(want: str, got: str) -> bool:
    expected = _exception_type(want)
    return expected is not None and expected == _exception_type(got)


def _runner_trouble(answer: dict) -> verdicts.Verdict:
    status = answer.get("status")
    if status == "process_limit":
        return verdicts.Verdict(
            "failure",
            "error",
            "It started processes without end and reached the sandbox's "
            f"limit of {answer.get('limit')} processes; it was killed.",
            "Make the example stop starting processes.",
        )
    if status == "disk_limit":
        return verdicts.Verdict(
            "failure", "error", "It filled the sandbox's disk and was killed.", "Make the example write less."
        )
    if status == "crashed":
        return verdicts.Verdict(
            "failure",
            "warning",
            f"The interpreter crashed (exit {answer.get('exit')}).",
            "A crash in compiled code: check the library's build for this platform.",
        )
    if status == "cancelled":
        return verdicts.Verdict("skipped", None, "The validation was cancelled.")
    return verdicts.Verdict(
        "failure",
        "warning",
        f"The page runner stopped: {answer.get('message', status)}",
        "Rerun the validation; if it persists, report it.",
    )


def _syntax_problem(code: str) -> str:
    try:
        compile(code, "example", "exec", flags=python_code.PARSE_FLAGS)
    except SyntaxError as exc:
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno} of the example)"
    except ValueError as exc:
        return f"ValueError: {exc}"
    return "SyntaxError"


def _extras_by_distribution(requires: list[str]) -> dict[str, str]:
    """distribution -> the library extra that brings it, from the library's own requirements."""
    extras: dict[str, str] = {}
    for line in requires:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        match = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", str(requirement.marker or ""))
        if match:
            extras.setdefault(normalized(requirement.name), match.group(1))
    return extras


def validate_document(
    analysis: ExtractionAnalysis, options: ValidationOptions, observer: ValidationObserver | None = None
) -> ValidationResult:
    observer = observer or ValidationObserver()
    observer.document_started(analysis.page, len(analysis.examples))
    requirements_for(analysis)
    profiles = [options.sandbox.profile, *options.other_profiles]
    document = None
    results: list[ExampleResult] = []
    try:
        for number, profile in enumerate(profiles):
            page = PageValidation(analysis, options, observer)
            if not page.runnable:
                break
            sandbox = replace(options.sandbox, profile=profile)
            try:
                document = DocumentSandbox(
                    replace(options, sandbox=sandbox), Path(analysis.page).stem, observer.should_stop
                )
            except SandboxUnavailable as exc:
                raise ValidationError(f"no sandbox for the examples of {analysis.page}: {exc}") from None
            page.prepare(document)
            if page.base_failed is None or not page.base_failed.wrong_python or number == len(profiles) - 1:
                break
            document.close()  # the library does not support this Python: the next one
            document = None
        if document is not None:
            observer.sandbox_ready(document.sandbox.describe())
        results = page.run(observer.should_stop)
    finally:
        if document is not None:
            document.close()
    result = page.result(results)
    observer.document_finished(analysis.page, result)
    return result


def load_analyses(folder: Path) -> tuple[list[ExtractionAnalysis], list[str]]:
    """Every *_analysis.json of a folder (extraction_summary.json is not one), and the errors of bad files."""
    analyses, problems = [], []
    for path in sorted(Path(folder).glob("*_analysis.json")):
        try:
            analyses.append(load_model(ExtractionAnalysis, path))
        except FormatError as exc:
            problems.append(str(exc))
    return analyses, problems


def validate_all(
    analyses: list[ExtractionAnalysis],
    output_dir: Path,
    options: ValidationOptions,
    observer: ValidationObserver | None = None,
) -> ValidationSummary:
    """Documents in parallel (up to num_workers), examples of one document in order; each document's file is
    written as soon as it is done, then the summary."""
    output_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for analysis in analyses:
        requirements_for(analysis)

    def one(analysis):
        document = validate_document(analysis, options, observer)
        write_model(output_dir / validation_file_name(analysis.page), document)
        return document

    with ThreadPoolExecutor(max_workers=max(1, options.num_workers)) as pool:
        documents = list(pool.map(one, analyses))
    summary = ValidationSummary(
        timestamp=utcnow(),
        validation_duration_seconds=round(time.monotonic() - started, 3),
        num_workers=max(1, options.num_workers),
        documents=documents,
    )
    write_model(output_dir / "validation_summary.json", summary)
    return summary
