"""One page followed in order, as its reader would: the docs' hidden setup, the variables the page exports and the
files it shows are in place when the reader gets there; doctest sessions run in the page's process one after
another, scripts in a fork of it after the earlier scripts they build on, and a script that passed (or broke
off: what it defined before stays) joins the process for the sessions after it. Every example runs, whatever
happened before it; its error counts at an earlier example only when it names what that one failed to define.
An example that fails after the page's earlier examples gets a second chance
in a fresh process holding only its section; one that needs an optional package the page never installs gets it.

One class over ~500 lines, on purpose: sessions and scripts share the page's process, what happened so far
(PageState), the second chance and the optional-dependency retry; apart, they would pass all of that around.
What is not about following the page lives beside it: the installs (page_setup), the runner's process and its
requests (page_process), what each outcome means (verdicts)."""

import ast
import difflib
import os
import re
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, TypeVar

from stackbench.docs import python_code
from stackbench.docs.distributions import in_test_suite, laid_out_modules
from stackbench.formats.results import ExampleResult, SetupProblem, ValidationEnvironment, ValidationResult
from stackbench.formats.walkthrough import RUNNABLE_STYLES as RUN_STYLES
from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis, PageFile
from stackbench.lib import output_compare
from stackbench.lib.clock import utcnow
from stackbench.validation import verdicts
from stackbench.validation.document_sandbox import DocumentSandbox, Install
from stackbench.validation.examples import (
    as_read,
    calls_print,
    names_in,
    readers_imports,
    runnable,
    script_name,
    sets_up,
    source_of,
    style_of,
)
from stackbench.validation.options import ValidationError, ValidationObserver, ValidationOptions
from stackbench.validation.page_process import PageProcess, materialize_request, script_request, session_request
from stackbench.validation.page_setup import PageSetup
from stackbench.validation.verdicts import Message

# What a library says when a file meant for its command runs without it: the object the command sets up is still
# its class (an attribute or a method looked up on the class itself), or the command or its context is missing.
NOT_SET_UP = re.compile(
    r"\btype object '\w+' has no attribute\b|^\w+\.\w+\(\) missing \d+ required positional argument"
    r"|\bCLI\b|\bcommand[- ]line\b|\bcontext\b",
    re.IGNORECASE,
)

# A session's verdict, the output the page shows for it, and what it printed.
SessionVerdict = tuple[verdicts.Verdict, str | None, str]

LEGACY_SKIP_REASON = "Example marked as not executable"
MAX_IMPORTS_ADDED = 3  # past a few, the example is more than a missing import away from running
# Standard-library modules named like everyday variables: a function's `copy` or `types` is more likely its own.
STDLIB_MODULES_NAMED_LIKE_VARIABLES = {
    "copy",
    "types",
    "string",
    "time",
    "random",
    "token",
    "code",
    "site",
    "select",
    "signal",
}


@dataclass
class PageState:
    """What happened so far, example by example."""

    results: dict[int, ExampleResult] = field(default_factory=dict)
    broken: set[int] = field(default_factory=set)  # examples that stopped on an exception, a timeout or an exit
    # examples whose error named what an earlier one failed to define -> that earlier example
    cascades: dict[int, int] = field(default_factory=dict)
    materialized: set[int] = field(default_factory=set)
    done_setup: set[int] = field(default_factory=set)
    applied_variables: set[int] = field(default_factory=set)
    written_files: set[int] = field(default_factory=set)
    unwritable_files: list[str] = field(default_factory=list)
    undownloaded_files: list[str] = field(default_factory=list)  # linked for the reader to save; not fetched here
    dirty: bool = False  # the page's process holds more than its hidden setup: what ran before may interfere
    tried_optional: set[str] = field(default_factory=set)
    # scripts that only lacked imports -> their code with the imports the reader added
    repaired: dict[int, str] = field(default_factory=dict)
    # sessions that only lacked imports -> the imports the reader typed before going on (they stay in the session)
    typed_imports: dict[int, str] = field(default_factory=dict)
    # scripts that raised the exception the page says they raise -> that exception ("TypeError: its message")
    shown_errors: dict[int, str] = field(default_factory=dict)
    # packages examples hand the library by name, looked up once -> whether the index has them and they are not here
    missing_published: dict[str, bool] = field(default_factory=dict)
    # examples that failed on a cause outside themselves -> that cause (verdicts.Verdict.shared_cause)
    causes: dict[int, str] = field(default_factory=dict)
    # each such cause -> the first example reported failing on it
    reported_causes: dict[str, int] = field(default_factory=dict)


T = TypeVar("T")
# The severities a failure is reported at; info is a remark beside them.
REPORTED_SEVERITIES = ("error", "warning")
# What Python says when an abstract base refuses an instance (`Can't instantiate abstract class X with ...`).
ABSTRACT_REFUSED = re.compile(r"Can't instantiate abstract class (\w+)")
IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
# A heading that is one name of code, as a reference titles the section about it: `paint`, `shapes.paint()`.
# A shell line that runs pytest (`pytest cat.py`, `python -m pytest test_app.py`).
RUNS_PYTEST = re.compile(r"(?:^|\s|/)(?:py\.test|pytest)(?:\s|$)")
HEADING_NAME = re.compile(r"^`?(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*)(?:\(\))?`?$")


class PageValidation:
    """One page followed in order, as its reader would."""

    def __init__(self, analysis: ExtractionAnalysis, options: ValidationOptions, observer: ValidationObserver):
        self.analysis, self.options, self.observer = analysis, options, observer
        self.examples = [as_read(e) for e in analysis.examples]
        self.trees = [python_code.parse(source_of(e)) if style_of(e) in RUN_STYLES else None for e in self.examples]
        self.defines = [
            python_code.defined_names(t) if t is not None else names_in(e)
            for t, e in zip(self.trees, self.examples, strict=True)
        ]
        self.setup_defines = set().union(*(python_code.defined_by(s.code) for s in analysis.setup))
        # Names the page only ever imports from the reader's own code: the reader's, like names nothing defines.
        laid_out = laid_out_modules(f.path for f in analysis.files)
        borrowed = [readers_imports(e, laid_out) for e in self.examples]
        self.readers_own_names = set().union(*borrowed) - self.setup_defines
        for defines, imported in zip(self.defines, borrowed, strict=True):
            self.readers_own_names -= defines - imported
        # The names the page imports from modules not the reader's (the library's, the standard library's, another
        # package's): whatever the prose calls them ("your `bar`", "replace `time`"), they are not stand-ins.
        self.imported_names = set().union(
            *(python_code.imported_names(t) for t in self.trees if t is not None)
        ) - set().union(*borrowed)
        # Blocks that list signatures for reference, by index: not run, but checked against the library.
        self.listed = {
            index: signatures
            for index, e in enumerate(self.examples)
            if e.skip_reason == f"A fragment: {python_code.SIGNATURES_LISTED}."
            and (signatures := python_code.listed_signatures(e.code))
        }
        self.definitions: dict[str, list[Message]] | None = None
        self.state = PageState()
        self.setup_problems: list[SetupProblem] = []
        self.environment: ValidationEnvironment | None = None
        self.knowledge = verdicts.PageKnowledge(analysis.library, analysis.version or "")
        self.knowledge.aliases = dict(analysis.docs_aliases)
        self.knowledge.fixtures = set().union(*(python_code.fixtures_asked(t) for t in self.trees if t is not None))
        self.base_failed: Install | None = None
        # why the page's process never started (the worker's trouble, not the page's): its examples are not run
        self.not_started: str | None = None
        self.document: DocumentSandbox | None = None
        self.process: PageProcess | None = None
        self.setup: PageSetup | None = None

    @property
    def runnable(self) -> list[int]:
        return [i for i, e in enumerate(self.examples) if runnable(e) and style_of(e) in RUN_STYLES]

    # Examples are run only on a prepared page (prepare() gives it its machine and its installs), and run() starts
    # the page's process before the first one: a page with nothing runnable never gets that far.
    @property
    def _machine(self) -> DocumentSandbox:
        assert self.document is not None, "prepare() comes before any example runs"
        return self.document

    @property
    def _installs(self) -> PageSetup:
        assert self.setup is not None, "prepare() comes before any example runs"
        return self.setup

    @property
    def _running(self) -> PageProcess:
        assert self.process is not None, "run() starts the page's process before any example runs"
        return self.process

    # -- setting the machine up --------------------------------------------------------------------------------
    def prepare(self, document: DocumentSandbox) -> None:
        self.document = document
        self.setup = PageSetup(self.analysis, document, self.knowledge, self.setup_problems)
        self.base_failed = self.setup.install(self._imported_modules())

    def _imported_modules(self) -> list[str]:
        modules: list[str] = []
        for index in self.runnable:
            for module in python_code.imported_modules(self.trees[index]):
                if module not in modules:
                    modules.append(module)
        return modules

    def _start_message(self) -> Message:
        return {
            "cwd": self._machine.sandbox.work,
            "library_modules": self.knowledge.library_modules,
            "page_packages": self.knowledge.page_packages,
            # pytest too when the page shows tests: each test module runs in a fork that then has it imported.
            "preload": self.knowledge.library_modules + (["pytest"] if self._shows_tests() else []),
            "output_cap": self.options.output_cap,
        }

    def _shows_tests(self) -> bool:
        return any(style_of(self.examples[i]) == "tests" for i in self.runnable)

    # -- following the page ------------------------------------------------------------------------------------
    def run(self, should_stop: Callable[[], bool]) -> list[ExampleResult]:
        results = []
        try:
            if (self.runnable or self.listed) and self.base_failed is None:
                try:
                    self.process = PageProcess(self._machine, self._start_message(), should_stop)
                except ValidationError as exc:
                    # One page's runner that cannot start (a worker too loaded to start it in time) stops that
                    # page, never the pages validated beside it.
                    self.not_started = str(exc)
                    self.setup_problems.append(SetupProblem(message=f"The examples were not run: {exc}"))
            if self.process is not None:
                self._record_environment()
                for number, setup in enumerate(self.analysis.setup):
                    if setup.line == 0 or setup.source != self.analysis.page:
                        self._apply_setup(number, self.process)
            for index in range(len(self.examples)):
                if should_stop():
                    break
                try:
                    if self.process is not None:
                        self._catch_up(index, self.process)
                    result = self._unless_reported_before(index, self._validate(index))
                except ValidationError as exc:
                    # A runner that cannot start again midway (a worker too loaded to restart it in time) stops
                    # the rest of that page, never the pages validated beside it.
                    self._stopped_at(index, exc)
                    result = self._validate(index)
                self.state.results[index] = result
                results.append(result)
                self.observer.example_finished(self.analysis.page, result)
                if self._joins_page(index) and self._sessions_after(index):
                    self._materialize(index, self._running)
        finally:
            if self.process is not None:
                self.process.close()
        return results

    def _stopped_at(self, index: int, exc: ValidationError) -> None:
        self.not_started = str(exc)
        line = self.examples[index].line
        self.setup_problems.append(SetupProblem(message=f"The examples from line {line} on were not run: {exc}"))
        if self.process is not None:
            self.process.close()
            self.process = None

    def _fields(self, index: int, verdict: verdicts.Verdict) -> dict[str, Any]:
        if verdict.shared_cause is not None:
            self.state.causes[index] = verdict.shared_cause
        return verdict.result_fields()

    def _unless_reported_before(self, index: int, result: ExampleResult) -> ExampleResult:
        """A failure whose cause lies outside the block (an import never made, a package never installed, a
        backend an installed package lacks) that an earlier example of the page was reported failing on is that
        problem again: one fix, reported once. The example still fails; it is listed as info, pointing there, so a
        repeated cause — a real defect or a misreading — counts once among the page's findings."""
        cause = self.state.causes.get(index)
        if cause is None or result.status != "failure" or result.severity not in REPORTED_SEVERITIES:
            return result
        first = self.state.reported_causes.setdefault(cause, index)
        if first == index:
            return result
        said = f"Fails as example {first} (line {self.examples[first].line}) does, and is counted there"
        return result.model_copy(
            update={
                "severity": "info",
                "repeats_example": first,
                "suggestions": f"{said}: {result.suggestions}" if result.suggestions else f"{said}.",
            }
        )

    def _record_environment(self) -> None:
        environment = self._running.request({"op": "environment", "library": self.analysis.library}, 60)
        if environment.get("status") == "ok":
            self.environment = ValidationEnvironment(
                python=environment["python"], distributions=environment["distributions"]
            )
            self.knowledge.python = environment["python"]
            self.knowledge.requires_python = environment.get("requires_python", "")
            self.knowledge.console_scripts = environment.get("console_scripts", [])

    def _joins_page(self, index: int) -> bool:
        """A script whose run counts joins the page's process: one that passed, and one that broke off (what
        it defined before breaking stays in the reader's session, like a session's names)."""
        if style_of(self.examples[index]) == "doctest" or self.trees[index] is None:
            return False
        return (
            self.state.results[index].status == "success" or index in self.state.broken or index in self.state.repaired
        )

    def _sessions_after(self, index: int) -> bool:
        return any(style_of(e) == "doctest" and runnable(e) for e in self.examples[index + 1 :])

    def _apply_setup(self, number: int, process: PageProcess) -> None:
        setup = self.analysis.setup[number]
        self.state.done_setup.add(number)
        process.request(
            {"op": "setup", "name": f"{setup.source or 'setup'}:{setup.line}", "code": setup.code},
            self.options.timeout,
            remember=True,
        )

    def _catch_up(self, index: int, process: PageProcess) -> None:
        """What the reader did on the page before this example, in page order: the docs' hidden setup (of the
        example's doctest group), the variables the page exports, the files it shows (and, for a file, the files
        of its layout, shown block after block with it: the reader creates them all before running any)."""
        example = self.examples[index]
        line = example.line
        files_until = self._layout_end(index)
        for number, setup in enumerate(self.analysis.setup):
            if number not in self.state.done_setup and sets_up(setup, example):
                self._apply_setup(number, process)
        fresh = {}
        for number, variable in enumerate(self.analysis.environment):
            if variable.line < line and number not in self.state.applied_variables:
                self.state.applied_variables.add(number)
                fresh[variable.name] = variable.value
        if fresh:
            process.request({"op": "environ", "variables": fresh}, 10, remember=True)
        sandbox = self._machine.sandbox
        for number, page_file in enumerate(self.analysis.files):
            if (page_file.line >= line and page_file.line > files_until) or number in self.state.written_files:
                continue
            self.state.written_files.add(number)
            if page_file.url:
                self._download(page_file)
                continue
            try:
                sandbox.write_file(self._inside(page_file.path), page_file.content)
            except OSError:
                self.state.unwritable_files.append(page_file.path)

    def _download(self, page_file: PageFile) -> None:
        """The file the page links for its reader to save, saved where they run the examples; when it cannot be,
        the page's setup problem (its examples then fail as the reader's would without it)."""
        assert page_file.url is not None
        failed = self._machine.download(page_file.url, self._inside(page_file.path))
        if failed:
            self.state.undownloaded_files.append(page_file.path)
            self.setup_problems.append(
                SetupProblem(
                    requirement=page_file.path,
                    message=f"`{page_file.path}`, which the page links for its reader to save from {page_file.url}, "
                    f"could not be downloaded ({failed}): the examples that read it run without it.",
                )
            )

    def _inside(self, path: str) -> str:
        """Where a file the page shows is on the reader's machine: its own path, under their home or work folder."""
        sandbox = self._machine.sandbox
        inside = sandbox.home + path[1:] if path.startswith("~") else path
        return os.path.normpath(inside if inside.startswith("/") else f"{sandbox.work}/{inside}")

    def _layout_end(self, index: int) -> int:
        """The line of the last file block of the layout the example opens, when it is a file the page shows and
        more file blocks of other files follow it right away (the same file shown again is another version of
        it, not part of the layout); 0 for any other example."""
        files = {page_file.line: page_file.path for page_file in self.analysis.files}
        layout: dict[str, int] = {}
        for example in self.examples[index:]:
            path = files.get(example.line)
            if path is None or path in layout:
                break
            layout[path] = example.line
        return max(layout.values()) if len(layout) > 1 else 0

    def _materialize(self, index: int, process: PageProcess) -> None:
        """A script joins the page's process, so the sessions after it see what it did."""
        self.state.materialized.add(index)
        self.state.dirty = True
        process.request(
            materialize_request(self._as_repaired(index), index, self.options.timeout),
            self.options.timeout,
            remember=True,
        )

    def _validate(self, index: int) -> ExampleResult:
        example = self.examples[index]
        shown = self.analysis.examples[index].code
        base = {"example_index": index, "line": example.line, "context": example.context, "code": shown}
        style = style_of(example)
        if style == "tests" and not runnable(example) and self._adapted_by_reader(index):
            self._know_names_around(index)
            verdict = self._names_never_imported(index)
            if verdict is not None:
                return ExampleResult(**base, **self._fields(index, verdict), actual_code_executed=example.code)
        if style == "script" and not runnable(example) and self.process is not None and self._adapted_by_reader(index):
            self._know_names_around(index)
            verdict = self._past_readers_module(index, python_code.fill_in(example.code) or "")
            if verdict is not None:
                return ExampleResult(**base, **self._fields(index, verdict), actual_code_executed=example.code)
        if index in self.listed and self.process is not None:
            verdict = self._listed_verdict(index)
            if verdict is not None:
                return ExampleResult(**base, **self._fields(index, verdict), actual_code_executed=example.code)
        if not runnable(example) or style not in RUN_STYLES:
            reason = example.skip_reason or (
                LEGACY_SKIP_REASON if not runnable(example) else f"Not Python ({example.language})"
            )
            return ExampleResult(**base, status="skipped", error_message=reason, actual_code_executed=example.code)
        if example.language and example.language.lower() not in ("python", "py", "python3", "pycon", ""):
            return ExampleResult(
                **base,
                status="skipped",
                error_message=f"Not Python ({example.language})",
                actual_code_executed=example.code,
            )
        depends = python_code.dependencies(index, self.trees, self._unsettled())
        common = {
            **base,
            "depends_on_previous": bool(depends),
            "depends_on_example_indices": depends,
            "actual_code_executed": example.code,
        }
        if self.not_started is not None:
            return ExampleResult(
                **common,
                status="skipped",
                error_message="Not run: the page's runner did not start on the worker (see the page's setup "
                "problems). Not a doc defect; validate the page again.",
            )
        if self.base_failed is not None:
            return ExampleResult(
                **common,
                status="failure",
                severity="warning",
                error_message=f"{self.base_failed.message}: {self.base_failed.log[-600:]}",
                suggestions="The library could not be installed at this version, so no example of the page could "
                "run; see the page's setup problems.",
            )
        self._know_names_around(index)
        if style == "doctest":
            return self._session(index, common)
        if style == "tests":
            return self._tests(index, {**common, "depends_on_previous": False, "depends_on_example_indices": []})
        return self._script(index, common, depends)

    def _listed_verdict(self, index: int) -> verdicts.Verdict | None:
        """The first signature of a reference block that the library does not have as listed. A name the library
        lacks is the reader's own when the page says so (a hook they write, a method of their class, a function
        over the types the page defined): listed to show its shape."""
        if self.definitions is None:
            self.definitions = self._library_definitions()
        # A block whose signatures take or return what the page's earlier examples define (the reader's schema,
        # their model) shows the shape of functions the reader writes with those.
        # (Words, not a parse: a signature listed without a body is no Python.)
        used = set(IDENTIFIER.findall(self.examples[index].code)) - {
            listed.name.rsplit(".", 1)[-1] for listed in self.listed[index]
        }
        takes_pages_own = bool(used & set().union(*self.defines[:index]))
        for listed in self.listed[index]:
            definitions = self.definitions.get(listed.name.rsplit(".", 1)[-1], [])
            readers_own = (
                listed.name in self.examples[index].readers_names
                or verdicts.READERS_OWN_NAME.search(listed.name)
                or takes_pages_own
            )
            if definitions:
                verdict = verdicts.signature_difference(listed, definitions)
            elif listed.is_method or listed.is_hook or readers_own:
                verdict = None
            else:
                verdict = verdicts.signature_not_in_library(listed.name, self.analysis.library)
            if verdict is not None:
                return verdict
        subject = self._heading_name(index)
        defined = any(d["parameters"] is not None for d in self.definitions.get(subject or "", []))
        if subject and defined and subject != self.listed[index][0].name.rsplit(".", 1)[-1]:
            return verdicts.signature_of_another(subject, self.listed[index][0].name)
        return None

    def _heading_name(self, index: int) -> str | None:
        """The function or class a reference section is about, when its heading is that name alone (`` `paint` ``)
        and the block under it lists one signature, no method (a class's section lists its methods): the one the
        reader expects to see there."""
        match = HEADING_NAME.match(self.examples[index].context)
        (first, *more) = self.listed[index]
        return match.group(1) if match and not more and not first.is_method else None

    def _library_definitions(self) -> dict[str, list[Message]]:
        """One probe for the page: the library's definitions of every name its reference blocks list."""
        names = {s.name.rsplit(".", 1)[-1]: s.is_method for signatures in self.listed.values() for s in signatures}
        names |= {name: False for name in map(self._heading_name, self.listed) if name and name not in names}
        modules = [
            module
            for tree in self.trees
            if tree is not None
            for module in python_code.imported_modules(tree)
            if self.knowledge.is_library_module(module)
        ]
        answer = self._running.request({"op": "signatures", "names": names, "modules": modules}, 60)
        return answer.get("definitions", {})

    def _unsettled(self) -> set[int]:
        """Earlier examples whose definitions may not stand: they broke off, or did not run to the end."""
        return self.state.broken | {i for i, r in self.state.results.items() if r.status == "skipped"}

    def _know_names_around(self, index: int) -> None:
        """For the verdicts: which names other examples define, and how those examples fared (one whose error
        only repeated an earlier failure fared as that one did); whether the example is typed verbatim."""
        knowledge = self.knowledge
        knowledge.defined_later, knowledge.defined_by_failed, knowledge.defined_by_skipped = {}, {}, {}
        knowledge.unresolved, knowledge.beside_stand_ins, knowledge.misspelt = [], set(), {}
        knowledge.verbatim = style_of(self.examples[index]) == "doctest"
        knowledge.own_module = style_of(self.examples[index]) == "tests"
        # Only a module of its own asks where else a name is defined (every other example, not just earlier ones).
        knowledge.defined_elsewhere = {
            name: (other, self.examples[other].line)
            for other in (range(len(self.examples)) if knowledge.own_module else ())
            if other != index
            for name in self.defines[other]
        }
        knowledge.readers_names = (set(self.examples[index].readers_names) | self.readers_own_names) - (
            self.imported_names
        )
        line = self.examples[index].line
        shown = laid_out_modules(f.path for f in self.analysis.files if f.line <= line)
        knowledge.laid_out_later = laid_out_modules(f.path for f in self.analysis.files if f.line > line) - shown
        tree = self.trees[index]
        knowledge.used_as_modules = python_code.used_as_modules(tree) if tree is not None else set()
        knowledge.excerpt = _async_excerpt(self.examples[index], tree)
        if tree is None and knowledge.verbatim:
            tree = python_code.statements_that_parse(self.examples[index].code)  # less a line the page mistyped
        knowledge.reached_deep_only = python_code.reached_deep_only(tree) if tree is not None else set()
        section = self.examples[index].section_hierarchy
        knowledge.later_in_another_section = set()
        for other in range(len(self.examples) - 1, index, -1):
            for name in self.defines[other]:
                knowledge.defined_later[name] = (other, self.examples[other].line)
                if self.examples[other].section_hierarchy != section:
                    knowledge.later_in_another_section.add(name)
                else:
                    knowledge.later_in_another_section.discard(name)
        for other in range(index):
            origin = self.state.cascades.get(other, other)
            result = self.state.results.get(origin)
            for name in self.defines[other]:
                knowledge.defined_by_failed.pop(name, None)
                knowledge.defined_by_skipped.pop(name, None)
                if origin in self.state.broken:
                    knowledge.defined_by_failed[name] = (origin, self.examples[origin].line)
                elif result is not None and result.status == "skipped":
                    reason = (result.error_message or "").rstrip(".") + "."
                    knowledge.defined_by_skipped[name] = (origin, self.examples[origin].line, reason)

    def _free_names(self, index: int) -> list[str]:
        """Names the example uses that nothing on the page before it defines, and those the page says are the
        reader's own there, whatever an earlier block named so."""
        tree = self.trees[index]
        if tree is None:
            return []
        earlier = set(self.setup_defines).union(*self.defines[:index]) if index else set(self.setup_defines)
        readers = self.readers_own_names | set(self.examples[index].readers_names)
        return sorted(python_code.undefined_names(tree) - (earlier - readers))

    def _explain_names(self, index: int, verdict_exception: Message) -> None:
        """Before blaming a missing import, look at every name the example leaves undefined: one that nothing
        provides (no page example, no module, not the library) makes the example an illustration. So does one
        that is the reader's own whatever the page does elsewhere: a name the page only imports from the reader's
        code, or one that says it is theirs (`MyClass`), even if the page defines one by that name further on.
        Those nothing provides, and the failing name, are looked up for a slip of a name the reader would find."""
        knowledge = self.knowledge
        knowledge.readers_names |= self._named_for_their_parameters(index)
        failing = verdict_exception.get("name")
        free = [n for n in self._free_names(index) if n != failing]
        resolved = self._resolved(free)
        # A name the page's tests ask pytest for is that fixture in a block outside any test (a test's body shown
        # alone); what else the body uses unimported is still an import away.
        providers = {name: (resolved.get(name, {}).get("provided_by") or [""])[0] for name in free}
        knowledge.imports_beside = {
            name: provider
            for name, provider in providers.items()
            if name not in knowledge.fixtures
            and not resolved.get(name, {}).get("defined")
            and knowledge.is_library_module(provider)
        }

        def stand_in(name: str) -> bool:
            # A name the page presents as the reader's own object stands in for it, whatever module shares its
            # name and whatever a block the page did not run made by that name. One the docs import a module
            # under elsewhere is that module.
            if name not in resolved or resolved[name].get("defined") or name in knowledge.aliases:
                return False
            if name in knowledge.fixtures:
                return False  # the fixture of a test's body shown alone, not the reader's object
            if name in self.readers_own_names:
                return not any(resolved[name].values())
            if verdicts.readers_own_name(name, knowledge):
                return name not in knowledge.defined_by_failed
            return not any(resolved[name].values()) and not (
                name in knowledge.defined_later
                or name in knowledge.defined_by_failed
                or name in knowledge.defined_by_skipped
            )

        knowledge.unresolved = [name for name in free if stand_in(name)]
        if not knowledge.verbatim:
            # A script's name that nothing defines and the prose around it talks about (`path`, `PREFIX`) is the
            # value the text describes: the block is a pattern over the reader's values.
            knowledge.readers_names |= set(knowledge.unresolved) & set(self.examples[index].named_in_prose)
        knowledge.beside_stand_ins = _met_beside(self.trees[index], set(knowledge.unresolved))
        provided = verdict_exception.get("importable") or verdict_exception.get("provided_by")
        spelt = ([failing] if failing and not provided else []) + knowledge.unresolved
        if spelt:
            knowledge.misspelt = self._running.request({"op": "spellings", "names": spelt}, 60).get("spellings", {})

    def _named_for_their_parameters(self, index: int) -> set[str]:
        """Names the example uses without defining them that it passes as the parameter of the same name
        (`markdown(text)` for `def markdown(text, ...)`, `send(message=message)`): each stands for the reader's
        value for that parameter."""
        tree = self.trees[index]
        if tree is None:  # a session whose statements only parse one by one
            return set()
        places = python_code.argument_places(tree, self._free_names(index))
        callees = sorted({callee for found in places.values() for callee, place in found if isinstance(place, int)})
        parameters = (
            self._running.request({"op": "parameters", "callees": callees}, 30).get("parameters", {}) if callees else {}
        )
        return {
            name
            for name, found in places.items()
            for callee, place in found
            if (isinstance(place, str) and place.lower() == name.lower())
            or (isinstance(place, int) and (parameters.get(callee) or [])[place : place + 1] == [name])
        }

    # -- sessions ----------------------------------------------------------------------------------------------
    def _session(self, index: int, common: dict[str, Any]) -> ExampleResult:
        example = self.examples[index]
        request = self._session_request(index)
        answer = self._running.request(request, self.options.timeout)
        verdict, expected, output = self._session_verdict(index, answer)
        if verdict.status == "failure":
            retried: list[SessionVerdict] = []

            def rerun() -> tuple[verdicts.Verdict, Message]:
                again = self._running.request(request, self.options.timeout)
                retried.append(self._session_verdict(index, again))
                return retried[-1][0], again

            verdict, answer = self._with_optional_dependency(index, verdict, answer, rerun)
            if retried:
                _, expected, output = retried[-1]
        if verdict.status == "failure" and self.state.dirty:
            verdict, expected, output, answer = self._fresh_session(index, (verdict, expected, output, answer))
        verdict = self._unless_file_unavailable(index, verdict)
        verdict = self._unless_stand_in_value(index, verdict, answer)
        verdict = self._unless_readers_package(index, verdict, answer, [])
        verdict = self._unless_test_suite_file(index, verdict)
        if verdict.builds_on is not None:
            self.state.cascades[index] = verdict.builds_on
        self.state.dirty = True
        ran = self._with_imports_typed(index, request, verdict) if verdict.import_needed else answer
        if ran.get("status") == "ok":
            self._running.replay.append(request)
        if verdict.status == "failure" and any(f.get("exception") for f in ran.get("failures", [])):
            self.state.broken.add(index)
        statements = answer.get("statements", python_code.session_statements(example.code))
        return ExampleResult(
            **common,
            **self._fields(index, verdict),
            execution_output=self._machine.readable(output) or None,
            expected_output=expected,
            statements=statements,
            statements_run=answer.get("ran", 0),
        )

    def _with_imports_typed(self, index: int, request: Message, verdict: verdicts.Verdict) -> Message:
        """A session that stops for want of an import: its reader types the import the verdict names (then the
        next, a few at most) and goes on, and the import stays in their session for the sessions after it. The
        page's process is started anew on what came before the session, as if the reader had typed the imports
        first, and the session runs once more; its failure stays reported. What the session did this time is what
        it did (its answer), for the examples after it."""
        added: list[str] = []

        def attempt() -> Message | None:
            self._running.restart()
            if added:
                typed = self._running.request(self._typed_imports_request(index, "\n".join(added)), 30)
                if typed.get("status") != "ok":
                    return None
            return self._running.request(request, self.options.timeout)

        answer: Message | None = None
        while verdict.import_needed and len(added) < MAX_IMPORTS_ADDED:
            added.append(verdict.import_needed)
            answer = attempt()
            if answer is None:  # the import itself fails: the session as the reader had it before typing it
                added.pop()
                answer = attempt() or {}
                break
            verdict, _, _ = self._session_verdict(index, answer)
        if added:
            self.state.typed_imports[index] = "\n".join(added)
            self._running.replay.append(self._typed_imports_request(index, self.state.typed_imports[index]))
        return answer or {}

    def _typed_imports_request(self, index: int, imports: str) -> Message:
        return {"op": "setup", "name": f"{self.analysis.page}:{self.examples[index].line}:imports", "code": imports}

    @staticmethod
    def _commented_as_raising(source: str, exc: Message) -> bool:
        tree = python_code.parse(source)
        said = python_code.said_to_raise(source, tree) if tree is not None else None
        return said is not None and verdicts.raised_as_said(said[0], exc)

    def _session_request(self, index: int) -> Message:
        return session_request(self.analysis.page, self.examples[index], self.options.timeout)

    def _session_verdict(self, index: int, answer: Message) -> SessionVerdict:
        """(verdict, expected output, what it printed): the first statement whose failure is a finding; a failure
        that only differs in format is noted unless a real one follows; an illustration skips the session."""
        status = answer.get("status")
        if status in ("timeout", "stuck"):
            return verdicts.still_running(self.options.timeout), None, answer.get("output", "")
        if status != "ok":
            return verdicts.runner_trouble(answer), None, answer.get("output", "")
        failures = answer.get("failures", [])
        noted: SessionVerdict | None = None
        for number, failure in enumerate(failures):
            where = f"line {failure['line'] + 1}"
            shown = f">>> {failure['source'].rstrip()}"
            if failure.get("exception"):
                exc = failure["exception"]
                newer = python_code.newer_syntax(failure["source"]) if exc["type"] == "SyntaxError" else None
                if newer:
                    verdict = verdicts.newer_syntax(newer, self.knowledge, where, self.examples[index].named_python)
                elif verdicts.shows_exception(failure["want"], exc):
                    # the page shows the traceback (in a form doctest cannot read)
                    verdict = verdicts.shown_exception_message(failure["want"], exc, where)
                elif self._commented_as_raising(failure["source"], exc):
                    verdict = verdicts.SUCCESS  # a comment on the statement says it raises this
                else:
                    verdict = self._judge(index, exc, where)
                    if verdict.status == "failure":
                        # A name the statement uses was last (re)defined by an example that is not run: what the
                        # statement raises comes from the older object, not the one the page meant.
                        verdict = self._built_on_unmade(index, failure["source"]) or verdict
                    if verdict.status == "failure":
                        verdict = self._readers_own_data(index, failure["source"], exc) or verdict
                printed, expected = f"{shown}\n{exc.get('traceback', '')}", None
            elif not failure["got"].strip() and python_code.reads_as_code(failure["want"], failure["source"]):
                verdict = verdicts.mixed_prompts(f"after the prompt at {where}")
                printed, expected = shown, failure["want"]
            elif failure.get("expects_exception") and verdicts.same_exception(failure["want"], failure["got"]):
                # doctest compares a traceback by its last line; the page may show the whole chain of exceptions.
                verdict = verdicts.judge_output(failure["want"], failure["got"], where)
                if verdict.status == "failure":
                    verdict = verdicts.Verdict(
                        "success",
                        "info",
                        f"The exception's message differs from the page's ({where}); its type is the same.",
                    )
                printed, expected = f"{shown}\n{failure['got']}", failure["want"]
            else:
                unordered = self._goes_through_a_set(index, failure["source"])
                verdict = verdicts.judge_output(failure["want"], failure["got"], where, unordered)
                if verdict.status == "failure" and "stdout" in failure:
                    # What it wrote to standard output alone, without the log lines beside it, may be what the
                    # page shows in another format.
                    alone = verdicts.judge_output(failure["want"], failure["stdout"], where, unordered)
                    verdict = verdict if alone.status == "failure" else alone
                if verdict.status == "failure":
                    verdict = verdicts.none_value_shown(failure["want"], failure["got"], failure["source"]) or verdict
                if verdict.status == "failure" and "assigned" in failure:
                    verdict = verdicts.assigned_value_shown(failure["want"], failure["assigned"], where) or verdict
                if verdict.status == "failure":
                    verdict = verdicts.warning_shown(failure["want"], failure["got"], where) or verdict
                again = failure.get("shown_again") or []
                if (
                    verdict.status == "failure"
                    and again
                    and output_compare.form_shown(failure["want"], [failure["got"], *again])
                ):
                    verdict = verdicts.varies_from_run_to_run(where)
                if verdict.status == "failure" and not failure["want"].strip() and self.examples[index].output_pictured:
                    verdict = verdicts.Verdict(
                        "success",
                        "info",
                        f"It prints at {where}, which the page shows as a picture after the block: not compared.",
                    )
                if verdict.status == "failure":
                    # What it printed comes from an object the page makes (anew) in an earlier example that could
                    # not run here; one that failed made what it defined before it broke, so that output is its own.
                    verdict = self._built_on_unmade(index, failure["source"]) or verdict
                printed, expected = f"{shown}\n{failure['got']}", failure["want"]
            if verdict.status == "failure":
                later = len(failures) - number - 1
                if later:
                    verdict.message = f"{verdict.message or ''} ({later} later statement(s) of the session failed too.)"
                return verdict, expected, printed
            if verdict.status == "skipped":
                return verdict, None, printed
            noted = noted or (verdict, expected, printed)
        if noted:
            return noted
        return verdicts.judge_warnings(verdicts.docs_warnings(answer)), None, answer.get("output", "")

    def _goes_through_a_set(self, index: int, statement: str) -> bool:
        """The statement, or the session's statements up to it (which build what it goes through), makes a set."""
        source = python_code.session_source(self.examples[index].code)
        end = source.find(statement)
        tree = python_code.parse(source[: end + len(statement)] if end >= 0 else source)
        return tree is not None and python_code.builds_a_set(tree)

    def _readers_own_data(self, index: int, source: str, exc: Message) -> verdicts.Verdict | None:
        """A KeyError of a statement that looks keys up in an object an earlier example made (`d.groupby("cities")`
        in a reference of methods), where no example that ran put anything of those keys on the page: the page
        shows the call on the reader's own data, which holds them. A key close to one the page used is a slip."""
        if "builtins.KeyError" not in exc.get("mro", []):
            return None
        tree = python_code.parse(textwrap.dedent(source))
        if tree is None:
            return None
        assigned = set().union(*(python_code.assigned_names(t) for t in self.trees[:index] if t is not None))
        made = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & assigned)
        keys = {word for text in python_code.string_constants(tree) for word in IDENTIFIER.findall(text)}
        if not made or not keys:
            return None
        ran = [
            t
            for other, t in enumerate(self.trees[:index])
            if t is not None and (r := self.state.results.get(other)) is not None and r.status == "success"
        ]
        seen = {word for t in ran for text in python_code.string_constants(t) for word in IDENTIFIER.findall(text)}
        if any(key in seen or difflib.get_close_matches(key, seen, n=1, cutoff=0.8) for key in keys):
            return None
        return verdicts.Verdict(
            "skipped",
            None,
            f"Illustrative: it looks keys up in `{made[0]}` that no example before it put there "
            f"({exc['type']}: {exc.get('message', '')[:80]}): the call is shown on the reader's own data.",
        )

    def _built_on_unmade(self, index: int, source: str) -> verdicts.Verdict | None:
        """The cascade of a statement that uses a name whose last definition was not run (an earlier one, made
        anew there, may have run); a name the session's own earlier statements define is theirs."""
        try:
            names = python_code.undefined_names(ast.parse(textwrap.dedent(source)))
        except SyntaxError:
            return None
        session = python_code.session_source(self.examples[index].code)
        before = python_code.parse(session[: max(session.find(source), 0)])
        names -= python_code.defined_names(before) if before is not None else set()
        return verdicts.builds_on_unmade(sorted(names), self.knowledge, failed=False)

    def _fresh_session(
        self, index: int, first: tuple[verdicts.Verdict, str | None, str, Message]
    ) -> tuple[verdicts.Verdict, str | None, str, Message]:
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
        if verdict.status != "success":
            return first  # it fails either way (or cannot run on its own): as the reader following the page sees it
        note = verdicts.Verdict(
            "success",
            "info",
            "It passes when its section runs on its own, but not after the "
            f"page's earlier examples: {first[0].message}",
            first[0].suggestion,
        )
        return note, first[1], first[2], answer

    def _fresh_process(self, index: int) -> PageProcess | None:
        """A second page process holding what a reader starting at this section would have run."""
        section = [
            i
            for i in range(self._previous_session(index) + 1, index)
            if style_of(self.examples[i]) != "doctest"
            and self.state.results.get(i) is not None
            and self.state.results[i].status == "success"
            and style_of(self.examples[i]) in RUN_STYLES
        ]
        wanted = sorted(set(section) | set(python_code.dependencies(index, self.trees, self._unsettled())))
        try:
            fresh = PageProcess(self._machine, self._start_message(), self._running.should_stop)
        except ValidationError:
            return None
        for request in self._running.replay:
            if request["op"] in ("setup", "environ"):
                fresh.request(request, request.get("timeout", 30))
        for earlier in wanted:
            if self.state.results.get(earlier) is None:
                continue  # what broke off is replayed too: what it defined before breaking is the reader's
            if style_of(self.examples[earlier]) == "doctest":
                if earlier in self.state.typed_imports:
                    imports = self._typed_imports_request(earlier, self.state.typed_imports[earlier])
                    fresh.request(imports, self.options.timeout)
                fresh.request(self._session_request(earlier), self.options.timeout)
            else:
                fresh.request(
                    materialize_request(self._as_repaired(earlier), earlier, self.options.timeout),
                    self.options.timeout,
                )
        return fresh

    def _previous_session(self, index: int) -> int:
        for earlier in range(index - 1, -1, -1):
            if style_of(self.examples[earlier]) == "doctest":
                return earlier
        return -1

    # -- scripts -----------------------------------------------------------------------------------------------
    def _script(self, index: int, common: dict[str, Any], depends: list[int]) -> ExampleResult:
        example = self.examples[index]
        preludes: list[Message] = [
            {"name": script_name(self.examples[d], d), "code": self._as_repaired(d).code}
            for d in depends
            if style_of(self.examples[d]) != "doctest" and d not in self.state.materialized
        ]
        executed = "\n\n".join([p["code"].rstrip("\n") for p in preludes] + [example.code.rstrip("\n")]) + "\n"
        common = {**common, "actual_code_executed": executed}
        tree = self.trees[index]
        if tree is None:
            self.state.broken.add(index)
            return ExampleResult(**common, **self._fields(index, self._unparsed_verdict(example)))
        request = self._script_request(index, tree, preludes)
        verdict, answer = self._run_judged(index, request, self._script_verdict)
        if verdict.status == "failure" and (verdict.message or "").startswith(verdicts.VALUE_DIFFERS):
            verdict = self._unless_values_vary(index, request, answer) or verdict
        if verdict.status == "failure" and self.state.dirty:
            fresh = self._fresh_process(index)
            if fresh is not None:
                try:
                    retried = fresh.request(self._script_request(index, tree, []), self.options.timeout)
                finally:
                    fresh.close()
                second = self._script_verdict(index, retried)
                if second.status == "success":
                    verdict = verdicts.Verdict(
                        "success",
                        "info",
                        f"It passes on its own, but not after the page's earlier examples: {verdict.message}",
                        verdict.suggestion,
                    )
                    answer = retried
        verdict = self._unless_file_unavailable(index, verdict)
        verdict = self._unless_readers_path(index, verdict, answer)
        verdict = self._unless_stand_in_value(index, verdict, answer)
        verdict = self._unless_readers_package(index, verdict, answer, depends)
        verdict = self._unless_empty_class_refused(tree, verdict, answer)
        verdict = self._unless_test_suite_file(index, verdict)
        if verdict.status == "success" or verdict.builds_on is not None:
            verdict = self._module_without_imports(index, tree) or verdict
        if verdict.status == "success" and not verdict.severity:
            verdict = self._missing_in_a_body(index, tree) or verdict
        if verdict.builds_on is not None:
            self.state.cascades[index] = verdict.builds_on
        if verdict.import_needed and answer.get("status") == "exception":
            self._add_missing_imports(index, tree, preludes, verdict)
        if verdict.status == "skipped":
            verdict = self._typing_never_imported(index, tree) or verdict
        misspelt = python_code.misspelt_special_method(tree)
        if misspelt and verdict.status != "failure":
            # Its own defect, whatever it builds on or stands in for: no stand-in explains a special method's name.
            name, meant, line = misspelt
            verdict = verdicts.misspelt_special_method(name, meant, f"line {example.line + line - 1} of the page")
        unassigned = python_code.settings_with_colons(tree)
        if unassigned and verdict.status != "failure":
            # Its own defect, whatever it builds on: the run defines nothing for the colon to have assigned.
            name, line = unassigned
            verdict = verdicts.annotated_not_assigned(name, f"line {example.line + line - 1} of the page")
        if (
            example.shown_indent
            and not _async_excerpt(example, tree)
            and (verdict.status == "success" or verdict.builds_on is not None or self._module_path(index) is not None)
        ):
            # Its own defect, whatever it builds on: the reader's paste stops at its first line. A module the page
            # names stops there whatever it stands for or would raise: whatever loads the file meets the indent first.
            verdict = verdicts.shown_indented(example.shown_indent)
            if answer.get("status") == "ok":
                # The reader removes the indent, as the finding says, and goes on with what the block defines.
                self.state.repaired.setdefault(index, example.code)
        if verdict.status == "failure" and answer.get("status") != "ok" and index not in self.state.repaired:
            self.state.broken.add(index)
        output = self._machine.readable(answer.get("output", ""))
        expected = self._expected_output(index)
        return ExampleResult(
            **common,
            **self._fields(index, verdict),
            execution_output=output or None,
            expected_output=expected if verdict.severity and expected else None,
        )

    def _module_path(self, index: int) -> str | None:
        """The path of the Python module the page shows this block as (a file it names), if it does."""
        return next(
            (f.path for f in self.analysis.files if f.line == self.examples[index].line and f.path.endswith(".py")),
            None,
        )

    def _module_without_imports(self, index: int, tree: ast.Module) -> verdicts.Verdict | None:
        """A block the page shows as a module file is a module of its own: the reader's Python runs it with the
        names it imports, not those of the page's other files. A name only another file defines, and this one
        never imports, is a NameError for every reader, though the page's shared process has it."""
        path = self._module_path(index)
        if path is None:
            return None
        paths = {f.line: f.path for f in self.analysis.files if f.path.endswith(".py")}
        by_file: dict[str, tuple[int, int]] = {}
        elsewhere = set(self.setup_defines)
        for other, example in enumerate(self.examples):
            if other == index:
                continue
            if paths.get(example.line, path) == path:
                elsewhere |= self.defines[other]
            else:
                by_file.update(dict.fromkeys(self.defines[other], (other, example.line)))
        for name, line in python_code.first_uses(tree, python_code.undefined_names(tree)).items():
            if name in by_file and name not in elsewhere:
                return verdicts.never_imported(name, *by_file[name], self._name_error(index, name, line), module=path)
        return None

    def _typing_never_imported(self, index: int, tree: ast.Module) -> verdicts.Verdict | None:
        """A block not run to the end (it builds on one that is not run, or stands in for the reader's code) whose
        names from `typing` nothing on the page imports: wherever the reader pastes it, those are a NameError one
        import away, whatever the rest of it needs. A block that says it is a pattern on the reader's own names
        (`MyID`) is theirs to complete, imports and all; so is one whose reader stops first at a name of another
        module it never imports (the library's, a package's): it leaves its imports out, not typing's alone. A
        name the library exports too (`Container`) is the library's to its reader, not typing's."""
        free = self._free_names(index)
        if any(verdicts.readers_own_name(name, self.knowledge) for name in free):
            return None
        if not python_code.typing_names(free):
            return None
        resolved = self._resolved(free)
        providers = {name: (resolved.get(name, {}).get("provided_by") or [""])[0] for name in free}
        names = [name for name in python_code.typing_names(free) if providers[name] == "typing"]
        if not names:
            return None
        uses = python_code.first_uses(tree, free)
        first = min(((name, uses[name]) for name in names), key=lambda use: use[1])
        others = [
            name for name in free if name not in names and (resolved.get(name, {}).get("importable") or providers[name])
        ]
        if any(uses.get(name, first[1]) < first[1] for name in others):
            return None
        return verdicts.typing_never_imported(names, self._name_error(index, *first))

    def _missing_in_a_body(self, index: int, tree: ast.Module) -> verdicts.Verdict | None:
        """A script that ran to its end, but whose functions use a name nothing on the page defines so far that
        is plainly a slip: a standard-library module never imported (`os`), a near-spelling of a name the
        example imports (`tool` for `tools`), or a name the library exports (the exception a hook is to raise).
        Its run never called them; the reader who calls one gets a NameError."""
        imported, free = set(python_code.imported_names(tree)), self._free_names(index)
        resolved: dict[str, Message] | None = None  # asked of the page's process once, when a name needs it
        for name in free:
            near = difflib.get_close_matches(name, imported, n=1, cutoff=0.8)
            if _stdlib_module(name):
                suggestion = f"Add `import {name}` to the example: its functions use `{name}`, never imported."
            elif near:
                suggestion = f"`{name}` is not defined: the example imports `{near[0]}`; did you mean it?"
            else:
                resolved = self._resolved(free) if resolved is None else resolved
                provider = self._library_export(name, resolved.get(name, {}))
                if provider is None:
                    continue
                suggestion = (
                    f"Add `from {provider} import {name}` to the example: its functions use `{name}`, never imported."
                )
            resolved = self._resolved(free) if resolved is None else resolved
            unprovided = {n for n in free if n in resolved and not any(resolved[n].values())}
            # Met in a function or class that also uses a name nothing provides (`open_database(path)`): a
            # sketch of the reader's own, which they complete before calling it.
            if name in _met_beside(tree, unprovided - {name}):
                continue
            error = self._name_error(index, name, python_code.first_uses(tree, {name})[name])
            return verdicts.Verdict(
                "failure", "warning", error + ", once the function that uses it is called", suggestion
            )
        return None

    def _resolved(self, names: list[str]) -> dict[str, Message]:
        """Where each name comes from, as the page's process finds it: a page example, a module, the library or an
        installed package (all empty when nothing provides it)."""
        return self._running.request({"op": "resolve", "names": names}, 30).get("names", {}) if names else {}

    def _library_export(self, name: str, found: Message) -> str | None:
        """The library's module that exports the name as a class (not a module of its name), if one does."""
        provider = (found.get("provided_by") or [""])[0]
        exported = name[:1].isupper() and not found.get("defined") and self.knowledge.is_library_module(provider)
        return provider if exported else None

    def _name_error(self, index: int, name: str, line: int) -> str:
        """The NameError a reader gets at a line of the example, placed on the page."""
        return f"NameError: name '{name}' is not defined (line {self.examples[index].line + line - 1} of the page)"

    def _add_missing_imports(
        self, index: int, tree: ast.Module, preludes: list[Message], verdict: verdicts.Verdict
    ) -> None:
        """A script that stops only for want of an import: the reader adds the import the verdict names (then the
        next, a few at most) and runs it again. Once it runs to its end, its definitions stand for the examples
        after it, which are judged on their own instead of as its cascade (its failure stays reported)."""
        example, added = self.examples[index], list[str]()
        while verdict.import_needed and len(added) < MAX_IMPORTS_ADDED:
            added.append(verdict.import_needed)
            fixed = example.model_copy(update={"code": "\n".join(added) + "\n" + example.code})
            answer = self._running.request(
                script_request(fixed, index, tree, preludes, self.options.timeout, self._machine.sandbox.state, False),
                self.options.timeout,
            )
            if answer.get("status") == "ok":  # it ran to its end: all it defines stands
                # What it defined stays; the names the reader imported into it do not: an example after it that
                # uses them without importing them lacks the import too. A function or lambda it made that uses
                # one keeps it: it runs later, in the reader's module where the import stays.
                # The standard-library modules its functions use and nothing imports are imported too: the reader
                # who adds the imports it lacks adds those they see.
                kept = python_code.used_in_functions(tree)
                unbound = kept & python_code.undefined_names(tree) - set().union(*self.defines[:index])
                later = self._module_imports(sorted(name for name in unbound if _stdlib_module(name)), tree)
                names = [name for name in (statement.split()[-1] for statement in added) if name not in kept]
                dropped = f"\ndel {', '.join(names)}\n" if names else "\n"
                self.state.repaired[index] = "\n".join(later + [fixed.code.rstrip("\n")]) + dropped
                return
            if answer.get("status") != "exception":
                return
            verdict = self._script_verdict(index, answer)

    def _module_imports(self, modules: list[str], tree: ast.Module) -> list[str]:
        """The imports a reader adds for modules the code uses by their names: each module, or its member of that
        name when that is what has the attributes the code reaches (`datetime.utcnow()`)."""
        reached = python_code.attributes_reached(tree, set(modules))
        request = {"op": "resolve", "names": modules, "attributes": reached}
        found = self._running.request(request, 30).get("names", {}) if modules else {}
        return [
            f"from {name} import {name}" if found.get(name, {}).get("member_import") else f"import {name}"
            for name in modules
        ]

    def _as_repaired(self, index: int) -> CodeExample:
        """The example as the reader runs it from now on: with the imports they added to it."""
        example = self.examples[index]
        code = self.state.repaired.get(index)
        return example.model_copy(update={"code": code}) if code is not None else example

    # -- tests ---------------------------------------------------------------------------------------------------
    def _tests(self, index: int, common: dict[str, Any]) -> ExampleResult:
        """A test module, run with pytest as its reader runs it: a file of its own beside the page's files, so it
        has only the names it imports and the fixtures pytest finds (its own, its conftest.py's, its plugins')."""
        example = self.examples[index]
        if self.trees[index] is None:
            self.state.broken.add(index)
            return ExampleResult(**common, **self._fields(index, self._unparsed_verdict(example)))
        carried = self._carried_in(index)
        # What the page says it builds on the reader pastes above it, in the same file; a name that only a block
        # not run to the end defines is then that block's failure, not a module of its own missing it.
        carried_code = "".join(self.examples[i].code.rstrip("\n") + "\n\n" for i in carried)
        self.knowledge.own_module = not (example.builds_on_earlier or self._one_test_file())
        request = {
            "op": "tests",
            "name": script_name(example, index),
            "file": self._test_file(index),
            "code": carried_code + example.code,
            "timeout": self.options.timeout,
            "state": self._machine.sandbox.state,
        }

        def judged(index: int, answer: Message) -> verdicts.Verdict:
            return self._tests_verdict(index, _lines_shifted(answer, carried_code.count("\n")))

        verdict, answer = self._run_judged(index, request, judged)
        if verdict.status == "failure" and self.analysis.test_options:
            # The page has its reader run the tests with options of its own (`pytest --snapshot-update` records
            # what a snapshot test compares with): a test that fails without them is judged as they run it.
            verdict, answer = self._run_judged(index, {**request, "options": self.analysis.test_options}, judged)
        verdict = self._unless_file_unavailable(index, verdict)
        imported = answer.get("status") == "ok" and all(f["when"] != "collect" for f in answer.get("failures", []))
        if verdict.status == "failure" and not imported:
            self.state.broken.add(index)  # the module broke off: what it defines may not be there for later code
        return ExampleResult(
            **common,
            **self._fields(index, verdict),
            execution_output=self._machine.readable(answer.get("output", "")) or None,
        )

    def _carried_in(self, index: int) -> list[int]:
        """The earlier blocks a block the page says builds on them needs, that ran to the end: those defining a
        name it uses and does not define, and, in turn, the names those use."""
        own = self.trees[index]
        if not (self.examples[index].builds_on_earlier or self._one_test_file()) or own is None:
            return []
        needed = python_code.undefined_names(own)
        carried: list[int] = []
        for other in range(index - 1, -1, -1):
            tree, result = self.trees[other], self.state.results.get(other)
            fine = result is not None and result.status != "skipped" and other not in self.state.broken
            if tree is None or not fine or not needed & self.defines[other]:
                continue
            carried.insert(0, other)
            needed = (needed - self.defines[other]) | python_code.undefined_names(tree)
        return carried

    def _one_test_file(self) -> bool:
        """The page runs pytest on one file no block is given as (`pytest cat.py` under a function and its test):
        the reader keeps the page's code and its tests together in that file."""
        named = {f.path for f in self.analysis.files}
        return any(
            RUNS_PYTEST.search(command.command) and len(command.files) == 1 and command.files[0] not in named
            for command in self.analysis.file_commands
        )

    def _test_file(self, index: int) -> str:
        """The file the reader saves the tests in: the one the page names for the block, else a test file's name."""
        example = self.examples[index]
        named = [f.path for f in self.analysis.files if f.line == example.line and f.path.endswith(".py")]
        if named and not named[0].startswith(("/", "~")) and ".." not in named[0].split("/"):
            return named[0]
        return f"test_example_{index}_line_{example.line}.py"

    def _tests_verdict(self, index: int, answer: Message) -> verdicts.Verdict:
        """The first failure pytest reported that is the page's: collecting the module, setting a test up or
        calling it. An error a plugin raises while tearing a test down is its report on the run (a snapshot
        tool's "values to update"), not the test's outcome."""
        example = self.examples[index]
        status = answer.get("status")
        if status in ("timeout", "stuck"):
            return verdicts.still_running(self.options.timeout)
        if status == "exception":
            return self._judge(index, answer["exception"], "")
        if status != "ok":
            return verdicts.runner_trouble(answer)
        for failure in answer.get("failures", []):
            exc = failure["exception"]
            frames = [f for f in exc.get("frames", []) if f["where"] == "example"]
            if failure["when"] == "teardown" and not any(f["where"] in ("example", "page") for f in exc["frames"]):
                continue
            if self._raised_as_said(index, exc):
                continue
            where = f"line {example.line + frames[-1]['lineno'] - 1} of the page" if frames else ""
            test = failure.get("test") or ""
            if "builtins.AssertionError" in exc.get("mro", []) and failure["when"] == "call":
                beside = self._shown_beside(index, test.split("[")[0])
                if beside is not None:
                    return verdicts.Verdict(
                        "skipped",
                        None,
                        f"The page shows `{test}` changed beside it, at line {beside}: one of the two states of the "
                        f"change fails on purpose ({exc['type']}: {exc['message'][:200]}).",
                    )
            if "async def functions are not natively supported" in exc.get("message", ""):
                return self._async_without_plugin(index, test.split("[")[0])
            if exc.get("type") == "FixtureLookupError":
                readers = verdicts.readers_own_fixture(exc.get("message") or "")
                if readers:
                    return verdicts.Verdict(
                        "skipped",
                        None,
                        f"Illustrative: `{test}` asks for `{readers}`, a fixture of the reader's own: neither the "
                        "page, its conftest.py nor an installed plugin defines one, and it is no slip of one they do.",
                    )
                missing = (exc.get("message") or "").split("\n")[0]
                return verdicts.Verdict(
                    "failure",
                    "error",
                    f"pytest cannot set `{test}` up: {missing[:300]}",
                    "Define the fixture the test asks for (or name the plugin that provides it), under the name the "
                    "test uses.",
                )
            return self._judge(index, exc, where)
        if answer.get("exit") in (2, 3, 4) and not any(answer.get("tests", {}).values()):
            return verdicts.Verdict(
                "failure",
                "warning",
                f"pytest could not run the module (exit {answer['exit']}): "
                f"{self._machine.readable(answer.get('output', '')).strip()[-400:]}",
                "Run the tests by hand to see why pytest stops.",
            )
        return verdicts.SUCCESS

    def _adapted_by_reader(self, index: int) -> bool:
        """Code held back only by a value the reader puts in (their own project's name): whatever they put
        there, the module still has only the names it imports."""
        tree = self.trees[index]
        return (
            tree is not None
            and python_code.fill_in(self.examples[index].code) is not None
            and python_code.ellipsis_gap(tree) is None
            and not python_code.is_sketch(tree)
        )

    def _names_never_imported(self, index: int) -> verdicts.Verdict | None:
        """The first name a test module uses that it neither imports nor defines, when another example of the
        page defines it or an installed module of that name exists (pytest): a NameError in every reader's run.
        A module with a star import may have any name."""
        tree = self.trees[index]
        assert tree is not None, "only parsed test modules are read for their names"
        if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
            return None
        line = python_code.first_uses(tree, python_code.undefined_names(tree))
        free = list(line)
        resolved = {}
        if free and self.process is not None:
            resolved = self.process.request({"op": "resolve", "names": free}, 30).get("names", {})
        for name in free:
            error = self._name_error(index, name, line[name])
            if resolved.get(name, {}).get("importable"):
                return verdicts.Verdict(
                    "failure", "warning", error, f"Add `import {name}` to the test module: it is never imported."
                )
            if name in self.knowledge.defined_elsewhere:
                return verdicts.never_imported(name, *self.knowledge.defined_elsewhere[name], error)
        return None

    def _async_without_plugin(self, index: int, test: str) -> verdicts.Verdict:
        """An async test pytest ran without a plugin for it: the page's defect when the test is marked for one
        (the page never says to install it), the reader's choice when it is not (anyio, pytest-asyncio)."""
        tree = self.trees[index]
        assert tree is not None, "only parsed test modules are run"
        marked = any(isinstance(node, ast.Name) and node.id == "pytestmark" for node in ast.walk(tree)) or any(
            isinstance(node, ast.AsyncFunctionDef) and node.name == test and node.decorator_list
            for node in ast.walk(tree)
        )
        if marked:
            return verdicts.Verdict(
                "failure",
                "warning",
                f"`{test}` is async and marked for a pytest plugin that is not installed: pytest cannot run it.",
                "Tell the reader which plugin runs the async tests (`pip install pytest-asyncio`, anyio) and how.",
            )
        return verdicts.Verdict(
            "skipped",
            None,
            f"`{test}` is async: pytest runs it only through a plugin (anyio, pytest-asyncio) and its marker, "
            "which the reader chooses. Not a doc defect.",
        )

    def _shown_beside(self, index: int, test: str) -> int | None:
        """The line of the Python block just before or just after this one, when it defines the same test anew:
        the page shows the test before and after a change (a value fixed, a snapshot rewritten), and one of the
        two states fails on purpose."""
        programs = [i for i, e in enumerate(self.examples) if style_of(e) in ("script", "untagged", "tests")]
        place = programs.index(index)
        for neighbour in programs[max(place - 1, 0) : place] + programs[place + 1 : place + 2]:
            tree = self.trees[neighbour]
            if tree is not None and any(
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == test for node in tree.body
            ):
                return self.examples[neighbour].line
        return None

    def _unparsed_verdict(self, example: CodeExample) -> verdicts.Verdict:
        """A script that does not parse: prompts mixed into it, syntax of a newer Python, a fragment, or a syntax
        error of the page's."""
        prompt = python_code.prompt_line(example.code)
        if prompt is not None:
            return verdicts.mixed_prompts(f"line {example.line + prompt - 1} of the page")
        newer = python_code.newer_syntax(example.code)
        if newer:
            where = f"line {example.line} of the page"
            return verdicts.newer_syntax(newer, self.knowledge, where, example.named_python)
        shape = python_code.fragment(example.code)
        if shape:
            return verdicts.Verdict("skipped", None, f"A fragment: {shape}.")
        return verdicts.Verdict(
            "failure", "error", verdicts.syntax_problem(example.code), "Fix the syntax of the example."
        )

    def _script_request(self, index: int, tree: ast.Module, preludes: list[Message]) -> Message:
        return script_request(
            self.examples[index],
            index,
            tree,
            preludes,
            self.options.timeout,
            self._machine.sandbox.state,
            bool(self._documented_prints(index)),
        )

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

    def _script_verdict(self, index: int, answer: Message) -> verdicts.Verdict:
        example = self.examples[index]
        expected = self._expected_output(index)
        status = answer.get("status")
        if status in ("timeout", "stuck"):
            return verdicts.still_running(self.options.timeout)
        # A parser (a package's, or argparse's with its usage status 2) that stops a program run without arguments.
        if status == "exit" and (
            answer.get("raised_in") == "package" or (answer.get("raised_in") == "stdlib" and answer.get("exit") == 2)
        ):
            return verdicts.Verdict(
                "skipped",
                None,
                f"A command-line program: run without arguments, it exits "
                f"with status {answer.get('exit')} (its usage). Run it with the arguments it needs.",
            )
        tree = self.trees[index]
        if (
            status == "exit"
            and answer.get("raised_in") == "example"
            and tree is not None
            and python_code.exits_as_written(tree, answer.get("line", 0))
        ):
            return verdicts.SUCCESS  # `raise SystemExit(1)`: the example shows how to exit, and does
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
            if expected and verdicts.exception_type(expected) == exc.get("type"):
                return self._shown_error_raised(index, exc)  # the page shows this very exception
            shown_type = self._read_at_raise(index, exc, python_code.type_shown_with_message)
            if shown_type is not None and not verdicts.raised_as_said(shown_type, exc):
                return verdicts.another_exception_shown(shown_type, exc, where)
            if self._raised_as_said(index, exc) or self._message_shown(index, exc):
                return self._shown_error_raised(index, exc)
            if self._arguments_missing(index, exc, frames):
                return verdicts.Verdict(
                    "skipped",
                    None,
                    "A command-line program: run without arguments, it reads one from `sys.argv` that is not there. "
                    "Run it with the arguments it needs.",
                )
            command = self._command_running(index)
            if command is not None and self._outside_command(index, exc):
                return self._never_imported_for_command(index, command) or verdicts.outside_command(command, exc)
            verdict = self._judge(index, exc, where)
            statement = python_code.statement_at(tree, frames[-1]["lineno"]) if tree is not None and frames else None
            if verdict.status == "failure" and statement is not None:
                verdict = self._readers_own_data(index, statement, exc) or verdict
            if verdict.status == "failure" and tree is not None and frames:
                left_out = python_code.code_left_out_above(tree, frames[0]["lineno"])
                if left_out is not None:
                    return verdicts.left_out_before(example.line + left_out - 1, verdict.message or "")
            return verdict
        if status != "ok":
            return verdicts.runner_trouble(answer)
        if example.expected_exception:
            return verdicts.did_not_raise(example.expected_exception)
        shown = self._documented_prints(index)
        tree = self.trees[index]
        unordered = tree is not None and python_code.builds_a_set(tree)
        if shown:
            verdict = verdicts.judge_prints(shown, answer.get("prints", []), example, unordered)
        elif expected is not None and verdicts.another_run_shown(expected, answer.get("output", "")):
            verdict = verdicts.another_run(verdicts.output_place(example))
        elif expected is not None and (answer.get("output", "").strip() or calls_print(self.trees[index])):
            output, place = answer.get("output", ""), verdicts.output_place(example)
            verdict = verdicts.judge_output(expected, output, place, unordered)
        else:
            verdict = verdicts.SUCCESS
        if verdict.status == "success" and not verdict.severity:
            said = python_code.value_comments(example.code, tree)
            verdict = verdicts.judge_values(said, answer.get("values", []), example)
        if verdict.status != "success" or verdict.severity:
            return verdict
        return verdicts.judge_warnings(verdicts.docs_warnings(answer))

    def _command_running(self, index: int) -> str | None:
        """The library's own command that runs the block as a file, as the docs show it: one given the file name
        the page gives the block; else, for a block using the library that is no program of its own (no
        `__main__`), one the docs show giving the reader's Python files to the library's command (deploy, task
        or hook files): the reader runs the block with that command, not with python."""
        scripts = set(self.knowledge.console_scripts)
        shown = [c for c in self.analysis.file_commands + self.analysis.docs_file_commands if c.program in scripts]
        if not shown:
            return None
        example = self.examples[index]
        named = {PurePosixPath(f.path).name for f in self.analysis.files if f.line == example.line}
        for command in shown:
            if named & {PurePosixPath(path).name for path in command.files}:
                return command.command
        tree = self.trees[index]
        used = python_code.undefined_names(tree) | set(python_code.imported_names(tree)) if tree is not None else set()
        return shown[0].command if self._library_names(index) & used and not example.has_main else None

    def _library_names(self, index: int) -> set[str]:
        """The names the page imports from the library up to the example (a fragment uses those of the blocks
        before it, in the same file)."""
        return {
            name
            for tree in self.trees[: index + 1]
            if tree is not None
            for name, module in python_code.imported_names(tree).items()
            if self.knowledge.is_library_module(module)
        }

    def _outside_command(self, index: int, exc: Message) -> bool:
        """The error is the command's missing set-up: the file's own (a name it never defines or imports, its
        syntax, an import) the command meets too; one raised at a statement using what the file imports from the
        library, whose message says that object is not set up (its class stands in its place: `type object 'Host'
        has no attribute`, `Host.name() missing 1 required positional argument`) or names the command or context
        it lacks, is the command's to set up."""
        if any(f"builtins.{own}" in exc.get("mro", []) for own in ("NameError", "SyntaxError", "ImportError")):
            return False
        frames = [f for f in exc.get("frames", []) if f["where"] == "example"]
        tree = self.trees[index]
        if not frames or tree is None or not NOT_SET_UP.search(exc.get("message", "")):
            return False
        return bool(python_code.names_at(tree, frames[-1]["lineno"]) & self._library_names(index))

    def _never_imported_for_command(self, index: int, command: str) -> verdicts.Verdict | None:
        """A name of the library's that the file uses and never imports: the command runs the whole file, and
        meets it (the plain run stopped before). A file the page names is a module of its own, with only the
        names it imports, whatever the page's other blocks import."""
        tree = self.trees[index]
        assert tree is not None, "only parsed files stop outside their command"
        own_module = any(f.line == self.examples[index].line and f.path.endswith(".py") for f in self.analysis.files)
        free = sorted(python_code.undefined_names(tree)) if own_module else self._free_names(index)
        resolved = self._resolved(free)
        for name in free:
            providers = [
                m for m in resolved.get(name, {}).get("provided_by", []) if self.knowledge.is_library_module(m)
            ]
            if providers and (own_module or not resolved[name].get("defined")):
                error = self._name_error(index, name, python_code.first_uses(tree, {name})[name])
                return verdicts.Verdict(
                    "failure",
                    "warning",
                    f"{error}, once `{command}` runs the file",
                    f"Add `from {providers[0]} import {name}` to the example: it is never imported.",
                )
        return None

    def _shown_error_raised(self, index: int, exc: Message) -> verdicts.Verdict:
        """A script raised the error the page shows. When it is word for word the error the last such script
        raised, and the class or function this one defines goes unused, it calls the earlier one's instead: the
        page shows the same failure twice, and the reader never sees the one this block is about."""
        error = f"{exc.get('type')}: {exc.get('message')}".rstrip(": ")
        earlier = max(self.state.shown_errors, default=None)
        self.state.shown_errors[index] = error
        tree = self.trees[index]
        unused = sorted(python_code.unused_definitions(tree)) if tree is not None else []
        if earlier is None or self.state.shown_errors[earlier] != error or not unused:
            return verdicts.SUCCESS
        return verdicts.repeats_shown_error(error, earlier, self.examples[earlier].line, unused[0])

    def _raised_as_said(self, index: int, exc: Message) -> bool:
        """The script raised what the page says it raises, at the statement the page says raises it or after."""
        example = self.examples[index]
        said = example.expected_exception
        if not said or not verdicts.raised_as_said(said, exc):
            return False
        frames = [f for f in exc.get("frames", []) if f["where"] == "example"]
        at = example.line + frames[0]["lineno"] - 1 if frames else None
        return example.expected_exception_line is None or at is None or at >= example.expected_exception_line

    def _arguments_missing(self, index: int, exc: Message, frames: list[Message]) -> bool:
        """An IndexError at a line of the example that reads `sys.argv[...]`: a program its reader runs with
        arguments, run here without them."""
        if "builtins.IndexError" not in exc.get("mro", []) or not frames:
            return False
        lines = self.examples[index].code.split("\n")
        number = frames[-1]["lineno"]
        return 0 < number <= len(lines) and "sys.argv[" in lines[number - 1]

    def _message_shown(self, index: int, exc: Message) -> bool:
        """A comment at the statement that raised shows the exception's message: the page shows that error."""
        return bool(self._read_at_raise(index, exc, python_code.comment_shows_message))

    def _read_at_raise(self, index: int, exc: Message, read: Callable[[str, ast.Module, int, str], T]) -> T | None:
        """What read() finds in the comments at the top-level statement of the example that raised, about the
        exception's message (None when the example's own code is not where it raised)."""
        tree, frames = self.trees[index], [f for f in exc.get("frames", []) if f["where"] == "example"]
        if tree is None or not frames:
            return None
        return read(self.examples[index].code, tree, frames[0]["lineno"], exc.get("message") or "")

    def _judge(self, index: int, exc: Message, where: str) -> verdicts.Verdict:
        shown_in = self._raised_in_page_file(index, exc)
        if shown_in is not None:
            return shown_in
        if "builtins.NameError" in exc.get("mro", []):
            self._explain_names(index, exc)
        if "builtins.ModuleNotFoundError" in exc.get("mro", []):
            sibling = self._package_sibling(index, exc.get("name") or "")
            if sibling is not None:
                path = self._module_path(index) or ""
                return verdicts.sibling_imported_absolutely(exc["name"], path, sibling, verdicts.error_line(exc, where))
        verdict = verdicts.judge_exception(exc, self.knowledge, where)
        tree = self.trees[index]
        needed = (verdict.import_needed or "").split()
        shape = tree is not None and python_code.elided_body(tree)
        if needed[:1] == ["from"] and _stdlib_module(needed[1]) and needed[1] not in ("abc", "typing") and shape:
            # A shape (a class or function whose body is `...`) borrowing a standard-library name: the reader's real
            # module has its imports; the block shows how the classes fit. (An abstract method's or a protocol's
            # `...` is its whole body: that block is a module of its own.)
            return verdicts.Verdict(
                "skipped",
                None,
                f"Illustrative: a shape with `...` for a body, using `{needed[-1]}` (from {needed[1]}) as the reader's "
                "own module imports it.",
            )
        if verdict.status == "skipped" and "builtins.ModuleNotFoundError" in exc.get("mro", []):
            return self._past_readers_module(index, exc.get("name") or "") or verdict
        if verdict.status == "skipped" and "relative import" in exc.get("message", ""):
            return self._library_source_import(index, where) or verdict
        return verdict

    def _package_sibling(self, index: int, module: str) -> str | None:
        """The page's file that `module` names when the example is a module of a package the page lays out (a
        folder with an `__init__.py`) and `module` is a bare name of a module beside it there."""
        path = self._module_path(index)
        if path is None or "." in module or "/" not in path:
            return None
        folder = path.rsplit("/", 1)[0]
        laid_out = {f.path for f in self.analysis.files}
        if f"{folder}/__init__.py" not in laid_out:
            return None
        return next((p for p in (f"{folder}/{module}.py", f"{folder}/{module}/__init__.py") if p in laid_out), None)

    def _library_source_import(self, index: int, where: str) -> verdicts.Verdict | None:
        """A relative import of the library's own module, of names that module has (`from .queue import Queue`,
        as the library's source writes it): no package of the reader's, but a line copied from the library's
        code. The reader's script is in no package, and imports those names from the library."""
        tree = self.trees[index]
        if tree is None:
            return None
        knowledge = self.knowledge
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level != 1 or not node.module:
                continue
            modules = [f"{top}.{node.module}" for top in knowledge.library_modules]
            names = [alias.name for alias in node.names]
            found = self._resolved([*modules, *names])
            providers = {
                next((p for p in found.get(name, {}).get("provided_by", []) if knowledge.is_library_module(p)), "")
                for name in names
            }
            if any(found.get(m, {}).get("importable") for m in modules) and len(providers) == 1 and all(providers):
                meant = f"from {providers.pop()} import {', '.join(names)}"
                return verdicts.library_source_import(f".{node.module}", meant, where)
        return None

    def _past_readers_module(self, index: int, module: str) -> verdicts.Verdict | None:
        """A script stopped at the import of a module that stands for the reader's own (`from my_hooks import
        on_error`), or held back by a value the reader puts in (`your_project`): its reader puts theirs there and
        reads on. The first name the rest uses and never imports or defines is then theirs to meet, judged as that
        NameError: one the library exports at its top is still a missing import, and a slip of the library's name
        still a misspelling."""
        tree = self.trees[index]
        if tree is None or style_of(self.examples[index]) != "script":
            return None
        free = set(self._free_names(index))
        met = sorted((n.lineno, n.col_offset, n.id) for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in free)
        if not met:
            return None
        line, _, name = met[0]
        found = self._resolved([name]).get(name, {})
        name_error: Message = {
            "type": "NameError",
            "mro": ["builtins.NameError", "builtins.Exception", "builtins.BaseException", "builtins.object"],
            "message": f"name '{name}' is not defined",
            "name": name,
            "importable": found.get("importable", False),
            "provided_by": found.get("provided_by", []),
        }
        self._explain_names(index, name_error)
        where = f"line {self.examples[index].line + line - 1} of the page, once `{module}` is the reader's own"
        verdict = verdicts.judge_exception(name_error, self.knowledge, where)
        return (
            verdict if verdict.status == "failure" and (verdict.import_needed or verdict.severity == "error") else None
        )

    def _raised_in_page_file(self, index: int, exc: Message) -> verdicts.Verdict | None:
        """An exception raised inside a module the page shows as a file, which the example imports, when the
        block that shows that file failed or was not run: that block's failure, counted there."""
        frames = exc.get("frames", [])
        if not frames:
            return None
        line = self.examples[index].line
        # The file as it stands when the example runs: the last block before it that shows that path, unless the
        # example is that file itself (a test module the page saves under the same name each time): then it raised
        # in its own code.
        own = {page_file.path for page_file in self.analysis.files if page_file.line == line}
        for page_file in sorted(self.analysis.files, key=lambda f: f.line, reverse=True):
            if page_file.line >= line or not page_file.path.endswith(".py"):
                continue
            if self._inside(page_file.path) != frames[-1]["filename"]:
                continue
            if page_file.path in own:
                return None
            shown = next((i for i, e in enumerate(self.examples[:index]) if e.line == page_file.line), None)
            result = self.state.results.get(shown) if shown is not None else None
            if result is None or shown is None:
                continue
            if result.status == "skipped":
                reason = (result.error_message or "").rstrip(".") + "."
                return verdicts.Verdict(
                    "skipped",
                    None,
                    f"Builds on example {shown} (line {page_file.line}, {page_file.path}), which is not run: {reason}",
                    builds_on=shown,
                )
            if shown in self.state.broken:
                return verdicts.Verdict(
                    "skipped",
                    None,
                    f"Builds on example {shown} (line {page_file.line}, {page_file.path}), which failed; counted "
                    "there.",
                    builds_on=shown,
                )
        return None

    def _unless_values_vary(self, index: int, request: Message, answer: Message) -> verdicts.Verdict | None:
        """A value a comment shows that the statement gives anew each run (a random id): run twice more, a
        statement whose value changes every time shows one of its values, in the form the runs give it."""
        runs = [dict(answer.get("values", []))]
        for _ in range(2):
            again = self._running.request(request, self.options.timeout)
            if again.get("status") != "ok":
                return None
            runs.append(dict(again.get("values", [])))
        said = python_code.value_comments(self.examples[index].code, self.trees[index])
        varying = {
            place
            for place in runs[0]
            if len({run.get(place) for run in runs}) == len(runs)
            and output_compare.form_shown(repr(said[place].value), [run.get(place) or "" for run in runs])
        }
        steady = [(place, value) for place, value in runs[0].items() if place not in varying]
        if not varying or verdicts.judge_values(said, steady, self.examples[index]).status == "failure":
            return None
        line = self.examples[index].line + said[min(varying)].line - 1
        return verdicts.varies_from_run_to_run(f"the comment at line {line}")

    def _run_judged(
        self, index: int, request: Message, judge: Callable[[int, Message], verdicts.Verdict]
    ) -> tuple[verdicts.Verdict, Message]:
        """The example run in the page's process and judged; run again once the optional package a library asks
        for is installed, as its reader would."""

        def attempt() -> tuple[verdicts.Verdict, Message]:
            answer = self._running.request(request, self.options.timeout)
            return judge(index, answer), answer

        verdict, answer = self._with_optional_dependency(index, *attempt(), attempt)
        return self._with_variables_set(index, request, (verdict, answer), judge)

    def _with_variables_set(
        self,
        index: int,
        request: Message,
        first: tuple[verdicts.Verdict, Message],
        judge: Callable[[int, Message], verdicts.Verdict],
    ) -> tuple[verdicts.Verdict, Message]:
        """An example that stops on the KeyError of a variable it reads with `os.environ["NAME"]` wants the
        reader's own value there (a connection string, a key), which the page leaves to them: the reader sets
        it and runs the example again, and so does the validator, with a stand-in value. What still fails in the
        example is the page's; what fails inside a package may be the stand-in's doing."""
        verdict, answer = first
        tree = self.trees[index]
        exception = answer.get("exception") or {}
        wanted = python_code.required_variables(tree) if tree is not None else []
        missing = exception.get("message", "").strip("'\"")
        if verdict.status != "failure" or "builtins.KeyError" not in exception.get("mro", []) or missing not in wanted:
            return first
        environment = {name: f"{name.lower()}-of-the-reader" for name in wanted}
        answer = self._running.request({**request, "environment": environment}, self.options.timeout)
        second = judge(index, answer)
        frames = (answer.get("exception") or {}).get("frames", [])
        if second.status == "failure" and frames and frames[-1]["where"] == "package":
            return verdicts.Verdict(
                "skipped",
                None,
                f"Needs the reader's environment: its own value of {missing}, which the example reads and the "
                "page does not set. Not a doc defect.",
            ), answer
        if second.status != "success" or second.severity:
            return second, answer
        return verdicts.Verdict(
            "success",
            "info",
            f"It reads {', '.join(wanted)} from the environment, which the page does not say to set; it runs once "
            "they are set.",
            f"Tell the reader to set {', '.join(wanted)} before running the example.",
        ), answer

    def _with_optional_dependency(
        self,
        index: int,
        verdict: verdicts.Verdict,
        answer: Message,
        rerun: Callable[[], tuple[verdicts.Verdict, Message]],
    ) -> tuple[verdicts.Verdict, Message]:
        """A library that needs an optional package for what the example does says so by failing to import it
        (or by leaving its integration None). A reader the page names the package to (or the library's extra
        that brings it) installs it and runs again; so does the validator, once per package, and a pass then
        only notes that the page never said to install it (unless the docs' installation pages did: the reader
        followed them first). So does the reader of a module of the library named after the package it adapts
        (`extras/aiohttp_limiter.py` for aiohttp): they use that package already. One the page never names stays
        a failure, whose verdict says what to install. So is the reader of an example that imports the package beside
        the library's module named after it (`from fastapi import FastAPI` with `dishka.integrations.fastapi`): they
        use that package already. rerun() runs the example again: (verdict, answer)."""
        if verdict.status != "failure":
            return verdict, answer
        exceptions = [answer.get("exception")] + [f.get("exception") for f in answer.get("failures", [])]
        module, exc = next(
            ((found, exc) for exc in exceptions if exc for found in [verdicts.optional_module(exc)] if found),
            (None, None),
        )
        adapted = module is None and (module := self._adapted_beside(index, exceptions)) is not None
        distribution = self._installs.distribution_of(module) if module else None
        if not module or not distribution or module in self.state.tried_optional:
            return verdict, answer
        if not (adapted or self._installs.told(module, distribution) or verdicts.adapter_of(module, exc or {})):
            return verdict, answer
        self.state.tried_optional.add(module)
        requirement = self._installs.requirement_for(module, distribution)
        if (
            self._installs.install_one(requirement, source=f"needed by {self.analysis.library} as `{module}`")
            != "installed"
        ):
            return verdict, answer
        self._running.restart()  # the library was imported without the package: import it anew
        second, retried = rerun()
        if second.status == "failure":
            return self._with_optional_dependency(index, second, retried, rerun)  # the next package it needs
        if self._installs.installed_by_docs(module, distribution):
            return second, retried
        return verdicts.Verdict(
            "success",
            "info",
            f"It needs `{requirement}`, which the page does not say to install.",
            f'Tell the reader to `pip install "{requirement}"` before this example.',
        ), retried

    def _adapted_beside(self, index: int, exceptions: list[Message | None]) -> str | None:
        """The package the example failed to import when the example also imports a module of the library named
        after it (`dishka.integrations.fastapi` for fastapi): the library's adapter to a package its reader uses."""
        adapters = [
            re.split(r"[._]", module)[1:]
            for module in python_code.imported_modules(self.trees[index])
            if self.knowledge.is_library_module(module)
        ]
        for exc in exceptions:
            if exc and "builtins.ModuleNotFoundError" in exc.get("mro", []) and exc.get("name"):
                top = exc["name"].split(".")[0]
                if any(top in words for words in adapters):
                    return top
        return None

    def _unless_file_unavailable(self, index: int, verdict: verdicts.Verdict) -> verdicts.Verdict:
        """A failure of an example that reads a file the page shows, where only the reader's machine can have it
        (/var/run/...: the sandbox's reader, like a reader without root, cannot write there), is no finding; nor is
        a failure that names a file the page links for the reader to save, which could not be downloaded here."""
        if verdict.status != "failure":
            return verdict
        code = self.examples[index].code
        for path in self.state.undownloaded_files:
            if path in code and path in (verdict.message or ""):
                return verdicts.Verdict(
                    "skipped",
                    None,
                    f"Needs {path}, which the page links for its reader to save and which could not be downloaded "
                    "here (see the page's setup problems). Not a doc defect.",
                )
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

    def _unless_empty_class_refused(
        self, tree: ast.Module | None, verdict: verdicts.Verdict, answer: Message
    ) -> verdicts.Verdict:
        """An abstract base refusing to make an instance of a class the example declares with only `...` for a
        body: a shape for the reader to fill in with the methods the base asks for, not code to run as it is."""
        refused = ABSTRACT_REFUSED.match((answer.get("exception") or {}).get("message", ""))
        if verdict.status != "failure" or tree is None or not refused:
            return verdict
        if refused.group(1) not in python_code.empty_classes(tree):
            return verdict
        return verdicts.Verdict(
            "skipped",
            None,
            f"Illustrative: `{refused.group(1)}` has an empty body for the reader to fill in with the methods its "
            "abstract base asks for.",
        )

    def _unless_test_suite_file(self, index: int, verdict: verdicts.Verdict) -> verdicts.Verdict:
        """An example that builds on a failed one and also names a file of the project's test suite the page never
        gives (`"tests/fixtures/books.json"`): fixing the earlier example, its reader still lacks that file, the
        example's own defect."""
        if verdict.builds_on is None:
            return verdict
        given = {f.path.removeprefix("./") for f in self.analysis.files}
        tree = self.trees[index]
        paths = [
            path
            for node in (ast.walk(tree) if tree is not None else ())
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for path in [node.value.removeprefix("./")]
            if "/" in path and "\n" not in path and in_test_suite(path.split("/")[0]) and path not in given
        ]
        if not paths:
            return verdict
        where = f"line {self.examples[index].line} of the page"
        return verdicts.test_suite_file(paths[0], f"FileNotFoundError: {paths[0]} ({where})")

    def _unless_readers_path(self, index: int, verdict: verdicts.Verdict, answer: Message) -> verdicts.Verdict:
        """A failure raised inside a package, or for a file that is not there, by an example that hands over a path
        standing for the reader's own (`path/to/template`): what the reader's files would make of it is theirs."""
        path = python_code.placeholder_path(self.examples[index].code)
        exception = answer.get("exception") or {}
        frames = exception.get("frames") or [{}]
        failed_on_files = frames[-1].get("where") == "package" or set(exception.get("mro", [])) & verdicts.MISSING_FILE
        if verdict.status != "failure" or not path or not failed_on_files:
            return verdict
        return verdicts.Verdict(
            "skipped", None, f"Needs the reader's environment: their own files at `{path}`. Not a doc defect."
        )

    def _unless_stand_in_value(self, index: int, verdict: verdicts.Verdict, answer: Message) -> verdicts.Verdict:
        """A failure whose error names a value the example made up for the reader's own (`"my_table"`, a dialect
        `"mydb"`): the example shows a call on the reader's data, which the page never had to give."""
        tree = self.trees[index]
        if verdict.status != "failure" or tree is None:
            return verdict
        raised = [answer.get("exception"), *(f.get("exception") for f in answer.get("failures", []))]
        messages = [
            e.get("message", "")
            for e in raised
            if e and not set(e.get("mro", [])) & {"builtins.NameError", "builtins.SyntaxError", "builtins.ImportError"}
        ]
        named = next(
            (
                v
                for v in python_code.stand_in_values(tree)
                for m in messages
                if re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", m)
            ),
            None,
        )
        if named is None:
            return verdict
        return verdicts.Verdict(
            "skipped",
            None,
            f"Needs the reader's own data: the example runs on `{named}`, a stand-in for theirs, which its error names."
            " Not a doc defect.",
        )

    def _unless_readers_package(
        self, index: int, verdict: verdicts.Verdict, answer: Message, depends: list[int]
    ) -> verdicts.Verdict:
        """A failure raised inside the library by an example that hands it a package by name (a tool that analyses
        the package it is given: `DSM("django")`), or builds on one that does, where that package is published but
        not installed here: its reader runs the example where the package is, as the page takes for granted."""
        if verdict.status != "failure" or self.trees[index] is None:
            return verdict
        trees = [tree for i in [*depends, index] for tree in [self.trees[i]] if tree is not None]
        handed = [name for tree in trees for name in python_code.string_names(tree, "handed")]
        looked_up = python_code.string_names(trees[-1], "looked_up")
        exceptions = [answer.get("exception")] + [f.get("exception") for f in answer.get("failures", [])]
        for exc in filter(None, exceptions):
            packages = verdicts.packages_handed_by_name(exc, handed, looked_up, self.knowledge)
            # The first one missing is enough to say why (each look-up downloads the package).
            missing = next((package for package in packages if self._missing_published(package)), None)
            if missing:
                return verdicts.needs_readers_package(missing, self.analysis.library)
        return verdict

    def _missing_published(self, package: str) -> bool:
        """The package (a top-level module) does not import here and the index has it, looked up once a page."""
        if package not in self.state.missing_published:
            found = self._machine.probe([package], self.analysis.library).get("found", {})
            distribution = self._installs.distribution_of(package)
            published = (
                found.get(package) is False
                and distribution is not None
                and self._machine.provides({distribution: [package]}).get(package, False)
            )
            self.state.missing_published[package] = published
        return self.state.missing_published[package]

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


def _stdlib_module(name: str) -> bool:
    return name in sys.stdlib_module_names and name not in STDLIB_MODULES_NAMED_LIKE_VARIABLES


def _met_beside(tree: ast.Module | None, stand_ins: set[str]) -> set[str]:
    """The names a reader first meets in a function or class of the block that also uses one of `stand_ins`."""
    met, beside = set[str](), set[str]()
    for statement in tree.body if tree is not None and stand_ins else ():
        used = {node.id for node in ast.walk(statement) if isinstance(node, ast.Name)}
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and used & stand_ins:
            beside |= used - met
        met |= used
    return beside


def _async_excerpt(example: CodeExample, tree: ast.Module | None) -> bool:
    """A script shown with every line indented that awaits: `await` only stands inside an async function, so the
    indentation is that function's, which the page does not show (an excerpt, not a pasting mistake)."""
    return bool(example.shown_indent) and tree is not None and python_code.awaits_at_top_level(tree)


def _lines_shifted(answer: Message, lines: int) -> Message:
    """The answer of a module run with other blocks' code above the example, its lines counted from the example's
    first line, as the page shows them."""
    if not lines:
        return answer

    def shifted(exc: Message) -> Message:
        frames = [
            {**f, "lineno": f["lineno"] - lines} if f.get("where") == "example" else f for f in exc.get("frames", [])
        ]
        return {**exc, "frames": frames}

    moved = {**answer, "failures": [{**f, "exception": shifted(f["exception"])} for f in answer.get("failures", [])]}
    if "exception" in answer:
        moved["exception"] = shifted(answer["exception"])
    return moved
