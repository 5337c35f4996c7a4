"""Code-example validation: every example of a doc page runs in a fresh virtualenv holding the exact library
version, deterministically and without a model.

Per document: one virtualenv (uv, or venv + pip when uv is missing), the library pinned plus the examples'
dependencies, removed afterwards. Per example: its own subprocess and temporary folder, merged with the
earlier examples it depends on, wrapped in asyncio.run when it awaits, under a timeout and an output cap, in
the sandbox of sandbox.py. The severity of a failure comes from the traceback's frames, which a small runner
inside the virtualenv reports as JSON."""

import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from audits.engines.capture import read_capped
from audits.engines.formats import ExampleResult, ValidationResult, ValidationSummary, validation_file_name
from audits.engines.sandbox import TOOLS, SandboxSettings, SandboxUnavailable, Watch, open_sandbox
from stackbench_site.lib.clock import utcnow
from stackbench_site.lib.jsonfiles import FormatError, load_model, parse_json_text, write_model
from walkthroughs.engines.formats import ExtractionAnalysis
from walkthroughs.engines.python_code import awaits_at_top_level, build_program, defined_names, dependencies, parse

INSTALL_TIMEOUT = 600
SKIPPED_REASON = "Example marked as not executable"

RUNNER = r"""
import difflib, json, os, sys, traceback, warnings
program, report_path, venv = sys.argv[1], sys.argv[2], os.path.realpath(sys.argv[3])
caught = []
original = warnings.showwarning
def record(message, category, filename, lineno, file=None, line=None):
    caught.append({"category": category.__name__, "message": str(message), "filename": filename, "lineno": lineno})
    original(message, category, filename, lineno, file, line)
warnings.showwarning = record
for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
    warnings.simplefilter("default", category)
def where(filename):
    path = os.path.realpath(filename)
    if path == os.path.realpath(program):
        return "example"
    if "site-packages" in path or "dist-packages" in path:
        return "package"
    if path.startswith(os.path.realpath(sys.base_prefix)):
        return "stdlib"
    return "other"
def close_matches(name, candidates):
    return difflib.get_close_matches(name, [c for c in candidates if not c.startswith("_")], n=3)
report = {"exception": None, "warnings": caught}
with open(program) as handle:
    source = handle.read()
sys.argv = [program]
scope = {"__name__": "__main__", "__file__": program, "__builtins__": __builtins__}
try:
    exec(compile(source, program, "exec"), scope)
except BaseException as exc:
    if isinstance(exc, SystemExit) and exc.code in (None, 0):
        pass
    else:
        frames = [{"filename": f.filename, "lineno": f.lineno, "name": f.name, "where": where(f.filename)}
                  for f in traceback.extract_tb(exc.__traceback__)[1:]]
        if isinstance(exc, SyntaxError) and exc.filename:
            frames.append({"filename": exc.filename, "lineno": exc.lineno or 0, "name": "<module>",
                           "where": where(exc.filename)})
        suggestions = []
        if isinstance(exc, ImportError) and exc.name:
            missing = str(exc).split("'")[1] if "cannot import name '" in str(exc) else None
            try:
                module = sys.modules.get(exc.name) or __import__(exc.name)
                if missing:
                    suggestions = close_matches(missing, dir(module))
            except BaseException:
                pass
        if isinstance(exc, AttributeError) and getattr(exc, "obj", None) is not None and exc.name:
            suggestions = close_matches(exc.name, dir(exc.obj))
        if isinstance(exc, NameError) and getattr(exc, "name", None):
            suggestions = close_matches(exc.name, list(scope) + dir(__builtins__))
        report["exception"] = {"type": type(exc).__name__, "module": type(exc).__module__, "message": str(exc),
                               "frames": frames, "suggestions": suggestions,
                               "name": getattr(exc, "name", None)}
        sys.stderr.write("Traceback (most recent call last):\n" + "".join(traceback.format_list(
            traceback.extract_tb(exc.__traceback__)[1:])) + "".join(traceback.format_exception_only(type(exc), exc)))
with open(report_path, "w") as out:
    json.dump(report, out)
sys.stdout.flush()
sys.stderr.flush()
os._exit(1 if report["exception"] else 0)
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


def requirements_for(analysis: ExtractionAnalysis) -> list[str]:
    """The library pinned to its version, plus the examples' dependencies; anything that is not a plain
    requirement (an option such as --index-url, a URL) is refused."""
    wanted = [f"{analysis.library}=={analysis.version}" if analysis.version else analysis.library]
    for example in analysis.examples:
        wanted += [dep for dep in example.dependencies if dep not in wanted]
    for spec in wanted:
        try:
            requirement = Requirement(spec)
        except InvalidRequirement:
            raise ValidationError(f"{analysis.page}: {spec!r} is not a valid package requirement") from None
        if requirement.url or spec.strip().startswith("-"):
            raise ValidationError(f"{analysis.page}: {spec!r} is not a plain package requirement")
    return wanted


class DocumentSandbox:
    """One document's machine: a sandbox whose reader virtualenv gets the library, and a folder per example."""

    def __init__(self, options: ValidationOptions, label: str, should_stop=lambda: False):
        self.options = options
        self.should_stop = should_stop
        self.sandbox = open_sandbox(options.sandbox, f"validate_{label}", read_only=options.find_links)
        self.python = f"{self.sandbox.home}/.venv/bin/python"
        self.runner = f"{self.sandbox.state}/stackbench_runner.py"
        self.sandbox.write_file(self.runner, RUNNER)

    def _run(self, command: list[str], timeout: float, cwd: str | None = None, env: dict | None = None):
        """(exit status, output as capped text, timed out). Output goes to a file so a flood costs no memory; the
        wait checks for cancellation and a flood of processes as it goes (either ends the command at once)."""
        log = self.sandbox.host_path(f"{self.sandbox.state}/output-{time.monotonic_ns()}.log")
        watch = Watch(self.sandbox, timeout, self.should_stop)
        with open(log, "wb") as out:
            spawned = self.sandbox.spawn(
                command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        stop = None
        while spawned.popen.poll() is None:
            stop = watch.interruption()
            if stop:
                spawned.kill()
                break
            time.sleep(0.05)
        spawned.popen.wait()
        flooded = stop == "process_limit" or watch.flooded()
        # Nothing a command starts may outlive it: a leftover (a fork bomb above all) would slow the next one down.
        if flooded:
            self.sandbox.kill_processes()
        else:
            self.sandbox.kill_strays()
        output, _ = read_capped(log, self.options.output_cap)
        log.unlink(missing_ok=True)
        if flooded:
            output += (
                f"\n[it reached the sandbox's limit of {self.sandbox.limits.max_processes} processes and was killed]"
            )
        if stop == "disk_limit":
            output += (
                f"\n[it filled the sandbox's disk ({self.sandbox.limits.disk_bytes // 1024**2} MB) and was killed]"
            )
        timed_out = stop == "timeout"
        return (None if stop in ("timeout", "cancelled") else spawned.popen.returncode), output, timed_out

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
        if code != 0:
            reason = f"timed out after {INSTALL_TIMEOUT} s" if timed_out else output[-4000:].strip()
            return Install(
                False, f"Installing {' '.join(requirements)} failed: {reason}", time.monotonic() - started, tool
            )
        return Install(True, "", time.monotonic() - started, tool)

    def execute(self, index: int, code: str) -> tuple[int | None, str, dict | None, bool, float]:
        folder = f"{self.sandbox.work}/example_{index}"
        program = f"{folder}/example.py"
        self.sandbox.write_file(program, code)
        report = f"{self.sandbox.state}/report_{index}.json"
        env = {**self.sandbox.environment, "VIRTUAL_ENV": f"{self.sandbox.home}/.venv"}
        started = time.monotonic()
        status, output, timed_out = self._run(
            [self.python, "-X", "faulthandler", self.runner, program, report, f"{self.sandbox.home}/.venv"],
            self.options.timeout,
            cwd=folder,
            env=env,
        )
        seconds = time.monotonic() - started
        try:
            report_host = self.sandbox.host_path(report)
            found = parse_json_text(self.readable(report_host.read_text()), report_host.name)
        except (OSError, FormatError):
            found = None
        return status, self.readable(output), found, timed_out, seconds

    def readable(self, text: str) -> str:
        """Sandbox paths mean nothing to a reader: show site-packages/... and example.py instead."""
        text = re.sub(
            re.escape(f"{self.sandbox.home}/.venv/lib/") + r"python[\d.]+/site-packages/", "site-packages/", text
        )
        return re.sub(re.escape(self.sandbox.work) + r"/example_\d+/", "", text)

    def close(self):
        self.sandbox.close()


def _doc_line(program, frame_line: int, examples) -> str:
    origin = program.doc_line(frame_line)
    if origin is None:
        return ""
    index, line = origin
    return f" (line {line} of the page, example {index})"


def classify(
    report: dict | None,
    status: int | None,
    timed_out: bool,
    output: str,
    program,
    examples,
    index,
    trees,
    library: str,
    version: str | None,
):
    """(status, severity, error_message, suggestions) from what the runner saw."""
    version_text = f" {version}" if version else ""
    if timed_out:
        return (
            "failure",
            "error",
            "The example timed out: it did not finish within the time limit.",
            "Make the example finish on its own (or mark it as not executable if it starts a server).",
        )
    exception = (report or {}).get("exception")
    warned = [w for w in (report or {}).get("warnings", []) if w["category"] in ("DeprecationWarning", "FutureWarning")]
    if exception is None:
        if status not in (0, None) and report is None:
            return (
                "failure",
                "error",
                f"The example exited with status {status}: {output.strip()[-300:]}",
                "Run the example by hand to see why it stops.",
            )
        if warned:
            first = warned[0]
            return (
                "success",
                "info",
                f"{first['category']}: {first['message']}",
                "The example works but uses something deprecated; update it to the recommended API.",
            )
        return ("success", None, None, None)
    kind, message = exception["type"], exception["message"]
    frames = exception["frames"]
    innermost = frames[-1] if frames else None
    error = f"{kind}: {message}"
    own_frame = innermost is not None and innermost["where"] == "example"
    place = _doc_line(program, innermost["lineno"], examples) if own_frame else ""
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        return ("failure", "error", error + place, f"Fix the {kind} in the example{place}.")
    if innermost is not None and innermost["where"] == "package":
        package_file = innermost["filename"].split("site-packages/")[-1]
        return (
            "failure",
            "warning",
            error,
            f"The error is raised inside the installed package ({package_file}, line {innermost['lineno']}, in "
            f"{innermost['name']}); check that the example's input is valid for {library}{version_text}.",
        )
    if own_frame and kind == "NameError":
        name = exception.get("name") or (message.split("'")[1] if "'" in message else "")
        later = [i for i, tree in enumerate(trees) if i > index and tree is not None and name in defined_names(tree)]
        if later:
            hint = f"`{name}` is only defined later, in example {later[0]} at line {examples[later[0]].line}; define it first."
        elif exception["suggestions"]:
            hint = f"`{name}` is not defined; did you mean `{exception['suggestions'][0]}`?"
        else:
            hint = f"`{name}` is not defined in this example or any earlier one; add the code that defines it."
        return ("failure", "error", error + place, hint)
    if own_frame and kind in ("ImportError", "ModuleNotFoundError"):
        if kind == "ModuleNotFoundError":
            module = exception.get("name") or message
            hint = (
                f"`{module}` is not installed with {library}{version_text}; add the package that provides it "
                "to the example's dependencies (or fix the import)."
            )
        elif exception["suggestions"]:
            hint = f"{message}; did you mean `{exception['suggestions'][0]}`? (checked against {library}{version_text})"
        else:
            hint = f"{message} in {library}{version_text}; check the name against this version's API."
        return ("failure", "error", error + place, hint)
    if own_frame and kind == "AttributeError":
        close = exception["suggestions"]
        hint = (
            f"{message}; did you mean `{close[0]}`? (checked against {library}{version_text})"
            if close
            else f"{message} in {library}{version_text}; the attribute may belong to another version."
        )
        return ("failure", "error", error + place, hint)
    return ("failure", "error", error + place, "Fix the example so it runs as documented.")


def validate_document(
    analysis: ExtractionAnalysis, options: ValidationOptions, observer: ValidationObserver | None = None
) -> ValidationResult:
    observer = observer or ValidationObserver()
    observer.document_started(analysis.page, len(analysis.examples))
    examples = analysis.examples
    trees = [parse(e.code) if e.execution_context != "not_executable" else None for e in examples]
    results: list[ExampleResult] = []
    requirements = requirements_for(analysis)
    try:
        sandbox = DocumentSandbox(options, Path(analysis.page).stem, observer.should_stop)
    except SandboxUnavailable as exc:
        raise ValidationError(f"no sandbox for the examples of {analysis.page}: {exc}") from None
    observer.sandbox_ready(sandbox.sandbox.describe())
    try:
        install = (
            sandbox.install(requirements) if any(e.execution_context != "not_executable" for e in examples) else None
        )
        for index, _example in enumerate(examples):
            if observer.should_stop():
                break
            result = _validate_example(index, examples, trees, sandbox, install, analysis)
            results.append(result)
            observer.example_finished(analysis.page, result)
    finally:
        sandbox.close()
    document = ValidationResult(
        page=analysis.page,
        library=analysis.library,
        version=analysis.version or "",
        language=analysis.language,
        validation_timestamp=utcnow(),
        results=results,
    )
    observer.document_finished(analysis.page, document)
    return document


def _validate_example(index, examples, trees, sandbox: DocumentSandbox, install: Install | None, analysis):
    example = examples[index]
    base = {"example_index": index, "line": example.line, "context": example.context, "code": example.code}
    if example.execution_context == "not_executable":
        return ExampleResult(
            **base, status="skipped", error_message=SKIPPED_REASON, suggestions=None, actual_code_executed=example.code
        )
    if example.language and example.language.lower() not in ("python", "py", "python3", "pycon"):
        return ExampleResult(
            **base,
            status="skipped",
            error_message=f"Not Python ({example.language})",
            actual_code_executed=example.code,
        )
    needed = dependencies(index, trees)
    parts = [(i, examples[i].code, examples[i].line) for i in needed] + [(index, example.code, example.line)]
    wrap = example.execution_context == "async" or any(
        trees[i] is not None and awaits_at_top_level(trees[i]) for i in needed + [index]
    )
    program = build_program(parts, wrap)
    common = {
        **base,
        "depends_on_previous": bool(needed),
        "depends_on_example_indices": needed,
        "actual_code_executed": program.code,
    }
    if install is not None and not install.ok:
        return ExampleResult(
            **common,
            status="failure",
            severity="warning",
            error_message=install.message,
            suggestions="The library could not be installed at this version, so no example of the "
            "page could run; check the version and the dependencies.",
        )
    status, output, report, timed_out, _ = sandbox.execute(index, program.code)
    outcome, severity, error, suggestions = classify(
        report, status, timed_out, output, program, examples, index, trees, analysis.library, analysis.version
    )
    if timed_out:
        error = f"The example timed out after {sandbox.options.timeout:g} s."
    return ExampleResult(
        **common,
        status=outcome,
        severity=severity,
        error_message=error,
        suggestions=suggestions,
        execution_output=output or None,
    )


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
