"""What an example's outcome means for the docs team, decided from what the page runner saw.

error: the docs are wrong (a syntax error, a name used before the page defines it, a name a doctest session types
that nothing defines, an API this version does not have, a documented value that differs). warning: the environment or the library's internals (a package that
would not install, an optional dependency the page never installs, an exception raised deep in the library).
info: it works, with a deprecation or an output that differs only in format. Not findings at all, and so
skipped with the reason: illustrations (names no page and no package defines in a script, the reader's own
objects and modules), examples that need the reader's own environment (credentials, a server, their files),
examples whose error names what an earlier one failed to define (counted once, where it failed) and programs
that keep running (servers)."""

import ast
import difflib
import json
import re
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from stackbench.docs import python_code
from stackbench.docs.distributions import (
    NAMESPACES,
    any_module,
    distribution_for,
    in_test_suite,
    normalized,
    readers_own,
    required_installed,
)
from stackbench.formats.walkthrough import CodeExample
from stackbench.lib.fingerprints import normalize_text
from stackbench.lib.output_compare import NOT_A_LITERAL, compare, differing_line, same_lines_in_another_order

# An answer of the page runner, or a part of one (an exception it saw, a warning): JSON, as the runner wrote it.
Message = dict[str, Any]

# Exceptions that say the reader's own machine is missing: credentials, a service, the network, the configured
# project a framework's code runs in (its settings, which the reader's project has and the page leaves to them).
ENVIRONMENT_EXCEPTIONS = {
    "django.core.exceptions.ImproperlyConfigured",
    "builtins.ConnectionError",
    "builtins.TimeoutError",
    "socket.gaierror",
    # dnspython's answers: with no outside network every name looks missing or every server silent, whatever
    # the domain (a library checking an address's domain raises its own error from these).
    "dns.resolver.NXDOMAIN",
    "dns.resolver.NoNameservers",
    "dns.resolver.LifetimeTimeout",
    "dns.resolver.NoResolverConfiguration",
    "dns.exception.Timeout",
    "botocore.exceptions.NoCredentialsError",
    "botocore.exceptions.PartialCredentialsError",
    "botocore.exceptions.NoRegionError",
    "botocore.exceptions.EndpointConnectionError",
    "botocore.exceptions.CredentialRetrievalError",
    "azure.core.exceptions.ClientAuthenticationError",
    "azure.core.exceptions.ServiceRequestError",
    "azure.identity._exceptions.CredentialUnavailableError",
    "google.auth.exceptions.DefaultCredentialsError",
    "google.auth.exceptions.RefreshError",
    "google.auth.exceptions.TransportError",
    "requests.exceptions.ConnectionError",
    "httpx.ConnectError",
    "httpx.ConnectTimeout",
    "urllib3.exceptions.NewConnectionError",
    "urllib3.exceptions.MaxRetryError",
    "urllib.error.URLError",
    "aiohttp.client_exceptions.ClientConnectorError",
    "redis.exceptions.ConnectionError",
    "pymongo.errors.ServerSelectionTimeoutError",
    "kombu.exceptions.OperationalError",
}
# What input() raises when no one can answer its prompt (the run's stdin is closed; the reader's is a terminal).
PROMPT_WITHOUT_INPUT = "EOF when reading a line"
# A library saying it only runs in a terminal: `This must be run on a tty connected terminal`, `not a tty`.
TERMINAL_NEEDED = re.compile(
    r"\b(?:must|needs? to|has to|can only|only)\s+(?:be\s+)?run\b.*\b(?:tty|terminal|console)\b|\bnot an? (?:tty|terminal)\b",
    re.IGNORECASE,
)
ENVIRONMENT_WORDS = (
    "credentials",
    "connection refused",
    "name or service not known",
    "temporary failure in name resolution",
    "network is unreachable",
    "no route to host",
    "could not connect",
    "not a git repository",  # the reader's own project, under git
)
# A library saying a program of the reader's machine is missing (`The vault CLI is not installed`, `command not
# found`): no package the page could name, but a tool its reader installs.
PROGRAM_MISSING = re.compile(
    r"\b(?:cli|command[- ]line tool|executable|binary)\b[^.\n]{0,30}?\bnot (?:properly |correctly )?"
    r"(?:installed|found|available)|\bcommand not found\b|\bnot found (?:in|on) (?:your |the )?PATH\b",
    re.IGNORECASE,
)
# git stopping with status 128 (`Command '['git', 'diff-index', ...]' returned non-zero exit status 128.`): run outside
# a repository, or one without commits, where the reader's own project has both.
GIT_OUTSIDE_REPOSITORY = re.compile(r"Command '\[?'git'.*exit status 128\b", re.DOTALL)
# A library saying the reader's environment lacks a variable it reads ("Expected environment variables not found:
# DB_URL", "environment variable API_KEY is not set"): the reader's own value, which the page leaves to them.
VARIABLE_UNSET = re.compile(
    r"\benvironment variables?\b[^.\n]{0,60}?\b(?:not (?:found|set|defined)|(?:is|are) missing|(?:is|are) required)\b|"
    r"\b(?:missing|unset|undefined)\s+environment variables?\b",
    re.IGNORECASE,
)
# A library saying the feature needs a newer Python than the reader's ("only supported in Python 3.14 and above").
NEWER_PYTHON_NEEDED = re.compile(
    r"\b(?:requires?|needs?|only (?:supported|available) (?:in|on|with)|supported (?:from|since)) Python "
    r"(3\.\d+)\+?(?: (?:and|or) (?:above|newer|later|higher))?",
    re.IGNORECASE,
)
# A module name quoted in an error message ('my_package', "your_app.models").
QUOTED_MODULE = re.compile(r"""['"`]([A-Za-z_][\w.]*)['"`]""")
# Objects whose attributes no newer Python adds (a plain function, a method, a coroutine): an attribute missing on
# one is the example's mistake (a task's method called on a function never decorated), never an old Python.
NEVER_GAIN_ATTRIBUTES = {"builtins.function", "builtins.method", "builtins.coroutine"}
MISSING_FILE = {"builtins.FileNotFoundError", "builtins.PermissionError", "builtins.NotADirectoryError"}
# A line of code that writes a file (`p.write_text(...)`, `open(name, "w")`, `df.to_csv(...)`): what it writes
# the reader need not have, only the folder it goes in.
WRITES_FILE = re.compile(
    r"\.(?:write_text|write_bytes|touch|to_csv|to_json|to_parquet|to_excel|savefig)\s*\(|"
    r"\bopen\s*\([^)]*?['\"][wax][bt+]*['\"]"
)


@dataclass
class Verdict:
    status: str  # success, failure, skipped
    severity: str | None = None
    message: str | None = None
    suggestion: str | None = None
    builds_on: int | None = None  # the earlier example whose failure this one only repeats (counted there)
    import_needed: str | None = None  # the import statement a reader adds to get past this failure
    # What the failure comes from outside the block, which other blocks of the page may share (the import to add,
    # the package to install, the place inside an installed package that raised): one problem wherever it recurs.
    shared_cause: str | None = None

    @property
    def finding(self) -> bool:
        return self.status == "failure" or self.severity is not None

    def result_fields(self) -> dict[str, Any]:
        """The verdict as an example result's fields."""
        return {
            "status": self.status,
            "severity": self.severity,
            "error_message": self.message,
            "suggestions": self.suggestion,
        }


SUCCESS = Verdict("success")


@dataclass
class PageKnowledge:
    """What the page says besides the example: which names which examples define, what was installed."""

    library: str
    version: str
    python: str = ""
    requires_python: str = ""  # the library's Requires-Python: which Pythons its readers may have
    console_scripts: list[str] = field(default_factory=list)  # the commands installing the library gives its reader
    library_modules: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # alias -> module, as the docs import it
    # name -> (example index, page line) of the examples that define it, by their fate
    defined_later: dict[str, tuple[int, int]] = field(default_factory=dict)
    later_in_another_section: set[str] = field(default_factory=set)  # of those, next defined under another heading
    defined_by_failed: dict[str, tuple[int, int]] = field(default_factory=dict)
    defined_by_skipped: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    # module -> ("installed" | "failed" | "unpublished" | "unnamed" (published, but the page never names it, so
    # not installed) | "page" | "project" (the package the page's pyproject.toml points its entry points to) |
    # "unknown", the requirement tried or looked up)
    modules: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the modules the page's install lines bring besides the library (the names they are likely imported under)
    told_modules: list[str] = field(default_factory=list)
    # distribution (normalized) -> the library extra that brings it
    extras: dict[str, str] = field(default_factory=dict)
    # names the failing example uses that nothing provides (not the one it failed on)
    unresolved: list[str] = field(default_factory=list)
    # name -> what it is a slip of (`module.name`, a constant by its name), among the failing name and the unresolved
    misspelt: dict[str, str] = field(default_factory=dict)
    # names the reader first meets in a function or class of the failing example that also uses an unresolved one
    beside_stand_ins: set[str] = field(default_factory=set)
    # the example is a doctest session: what the reader types, meant to be run verbatim
    verbatim: bool = False
    # names the page presents as the reader's own objects (`your `db``, `replace `db``)
    readers_names: set[str] = field(default_factory=set)
    # names the failing example reaches into (`name.attr`): a module, where one shares the name of what it provides
    used_as_modules: set[str] = field(default_factory=set)
    # the example is an excerpt from inside an async function the page does not show (indented, it awaits)
    excerpt: bool = False
    # the example is a module of its own (tests pytest runs): it has only the names it imports, whatever other
    # examples define; name -> (example index, page line) of the other examples that define it
    own_module: bool = False
    defined_elsewhere: dict[str, tuple[int, int]] = field(default_factory=dict)
    # the modules the page lays out as files only after the example: none of their files is shown yet
    laid_out_later: set[str] = field(default_factory=set)
    # names the failing example only reaches deep into (`db.model.get_id()`)
    reached_deep_only: set[str] = field(default_factory=set)
    # the fixtures the page's tests ask pytest for, by name
    fixtures: set[str] = field(default_factory=set)
    # name -> the library module that offers it, for names the failing example uses that it never imports
    imports_beside: dict[str, str] = field(default_factory=dict)

    @property
    def release(self) -> str:
        return f"{self.library} {self.version}".strip()

    def is_library_module(self, module: str | None) -> bool:
        top = (module or "").split(".")[0]
        return bool(top) and top in self.library_modules

    @property
    def page_packages(self) -> list[str]:
        """The top-level modules of the page's other packages: those its examples import (found installed) and those
        its install lines bring. A reader looks there for a name a block uses and never imports."""
        imported = [module.split(".")[0] for module, (state, _) in self.modules.items() if state == "installed"]
        return [m for m in dict.fromkeys(imported + self.told_modules) if not self.is_library_module(m)]

    def module_state(self, module: str) -> tuple[str, str]:
        """What became of the module, or of the package it is in; or of a module inside it, which the example
        imports (`import pkg.sub` fails at `pkg` when pkg is not there)."""
        parts = module.split(".")
        for length in range(len(parts), 0, -1):
            state = self.modules.get(".".join(parts[:length]))
            if state:
                return state
        inside = next((name for name in self.modules if name.startswith(module + ".")), None)
        return self.modules[inside] if inside else ("unknown", "")


def error_line(exc: Message, where_said: str = "") -> str:
    """The exception as a finding shows it: `KeyError: 'x' (line 12 of the page)`."""
    kind, message = exc.get("type", "Exception"), exc.get("message", "")
    return f"{kind}: {message}" + (f" ({where_said})" if where_said else "")


def judge_exception(exc: Message, page: PageKnowledge, where_said: str = "") -> Verdict:
    """The verdict on an exception an example raised. where_said locates it for the reader ("line 12")."""
    kind, message = exc.get("type", "Exception"), exc.get("message", "")
    mro = set(exc.get("mro", []))
    frames = exc.get("frames", [])
    innermost: Message = frames[-1] if frames else {"where": "example", "filename": "", "lineno": 0, "name": ""}
    in_docs = innermost["where"] in ("example", "page")
    error = error_line(exc, where_said)

    if "builtins.SyntaxError" in mro and in_docs:
        return Verdict("failure", "error", error, f"Fix the {kind} in the example.")
    if _overload_stub(innermost):
        return Verdict(
            "skipped",
            None,
            "Illustrative: it calls a function the page gives only as `@overload` signatures, a sketch for type "
            "checkers with no implementation to run (typing's stand-in refuses the call). Not a doc defect.",
        )
    if mro & MISSING_FILE and exc.get("folder_missing") and WRITES_FILE.search(_failing_line(frames)):
        folder = exc["folder_missing"]
        return Verdict(
            "failure",
            "error",
            error,
            f"The example writes into the folder `{folder}`, which the page never creates: create it first "
            f"(`Path({folder!r}).mkdir(parents=True, exist_ok=True)`), or say the reader needs it.",
        )
    test_file = _test_suite_file(exc, mro)
    if test_file:
        # Whatever opens it (the example, pathlib, the library handed the path), the path is the page's.
        return test_suite_file(test_file, error)
    environment = _environment_need(exc, mro, message)
    if environment:
        return Verdict("skipped", None, f"Needs the reader's environment: {environment}. Not a doc defect.")
    cascade = _cascade(exc, mro, page) if in_docs and not page.own_module else None
    if cascade:
        return cascade
    if "builtins.ModuleNotFoundError" in mro:
        return _missing_module(exc, page, in_docs, error)
    if "builtins.ImportError" in mro and "relative import" in message:
        return Verdict("skipped", None, "Illustrative: a relative import, from the reader's own package.")
    if "builtins.ImportError" in mro and exc.get("missing"):
        module, missing = exc.get("name") or "", exc["missing"]
        if page.is_library_module(module):
            return Verdict(
                "failure",
                "error",
                error,
                _sentence(f"`{missing}` is not in `{module}` in {page.release}" + _hint(exc)),
                shared_cause=f"the name {module}.{missing}",
            )
        return Verdict(
            "failure",
            "warning",
            error,
            f"`{module}` has no `{missing}` in the version installed "
            "with the library: a version conflict between the page and its dependencies.",
            shared_cause=f"the name {module}.{missing}",
        )
    if "builtins.NameError" in mro and in_docs:
        return _missing_name(exc, page, error)
    if mro & MISSING_FILE and (exc.get("filename") or "").startswith("~"):
        return Verdict(
            "failure",
            "error",
            error,
            "Python does not expand `~` in a path: the folder is looked for under a directory named `~`. Use "
            "os.path.expanduser() or pathlib.Path.home().",
        )
    if "builtins.AttributeError" in mro and in_docs:
        owner = exc.get("owner") or ""
        if exc.get("member_has"):
            return Verdict(
                "failure",
                "error",
                error,
                f"`{exc.get('name')}` is an attribute of `{owner}.{owner.rpartition('.')[2]}`, not of the module "
                f"`{owner}`: import it with `from {owner} import {owner.rpartition('.')[2]}`.",
            )
        if (
            owner.split(".")[0] in sys.stdlib_module_names
            and owner not in NEVER_GAIN_ATTRIBUTES
            and not exc.get("suggestions")
        ):
            python = f"Python {page.python}" if page.python else "this Python"
            return Verdict(
                "skipped",
                None,
                f"Needs another Python: `{owner}.{exc.get('name')}` is not in "
                f"{python}'s standard library (it came in a newer one). Not a doc defect.",
            )
        if page.is_library_module(owner):
            return Verdict(
                "failure",
                "error",
                error,
                _sentence(f"`{exc.get('name')}` does not exist on `{owner}` in {page.release}" + _hint(exc)),
            )
        return Verdict("failure", "error", error, _sentence("Fix the attribute the example uses" + _hint(exc)))
    if innermost["where"] == "package":
        own = next((m for m in QUOTED_MODULE.findall(message) if readers_own(m)), None)
        if own:
            # The library was handed the reader's own package by name (`load("my_package")`): a placeholder.
            return Verdict("skipped", None, f"Illustrative: it loads `{own}`, which stands for the reader's own code.")
        place = innermost["filename"].split("site-packages/")[-1]
        return Verdict(
            "failure",
            "warning",
            error,
            f"Raised inside an installed package ({place}, line {innermost['lineno']}, in {innermost['name']}): "
            f"check that the example's input is valid for {page.release}.",
            # The same exception from the same place: what the page's examples share (a backend, a setting), as
            # long as the message is the same up to what changes from one value to the next.
            shared_cause=f"{place}:{innermost['lineno']}: {kind}: {normalize_text(message)}",
        )
    return Verdict("failure", "error", error, "Fix the example so it runs as documented.")


def packages_handed_by_name(exc: Message, handed: list[str], looked_up: list[str], page: PageKnowledge) -> list[str]:
    """The packages (top-level modules) the example, or one it builds on, hands the library by name (handed: the
    strings they pass to a call, `DSM("django")`) when the error the library raised is about them: it quotes one of
    them or a dotted part of one (a word of its prose is no name: `Install x with caching feature`), or quotes a
    name the example looks up in what the library made of them (looked_up: `dsm["contrib.auth"]`). Whether each
    is missing here is the caller's to find out: a reader runs such an example in their own environment, where the
    package they name is installed."""
    frames = exc.get("frames") or [{}]
    if frames[-1].get("where") != "package":
        return []
    named = [s for s in handed if distribution_for(s) and not page.is_library_module(s)]
    message = exc.get("message", "")
    quotes_lookup = bool(set(QUOTED_MODULE.findall(message)) & set(looked_up))
    about = [
        s
        for s in named
        if quotes_lookup or any(re.search(rf"['\"`]{re.escape(part)}['\"`]", message) for part in _dotted_parts(s))
    ]
    return list(dict.fromkeys(s.split(".")[0] for s in about))


def _dotted_parts(name: str) -> list[str]:
    """Every run of a dotted name's parts: django.forms.models gives django, forms.models, models and the rest."""
    parts = name.split(".")
    return [".".join(parts[i:j]) for i in range(len(parts)) for j in range(i + 1, len(parts) + 1)]


def needs_readers_package(package: str, library: str) -> Verdict:
    """The example hands the library a package by name that is published but not installed here."""
    return Verdict(
        "skipped",
        None,
        f"Needs the reader's environment: it hands {library} the package `{package}` by name, which its reader has "
        "installed and this machine has not. Not a doc defect.",
    )


def _failing_line(frames: list[Message]) -> str:
    """The line of the example (or of a file of the page) where the exception was raised, as the traceback shows it."""
    return next((f.get("line") or "" for f in reversed(frames) if f["where"] in ("example", "page")), "")


def _sentence(text: str) -> str:
    return text if text.endswith(("?", ".")) else text + "."


def _hint(exc: Message) -> str:
    suggestions = exc.get("suggestions") or []
    return f"; did you mean `{suggestions[0]}`?" if suggestions else ""


def _environment_need(exc: Message, mro: set[str], message: str) -> str | None:
    if _unreachable(mro, message):
        return f"{exc['type']} ({message[:160]})"
    # A library's own error that stands for one of these (`LoaderError: Connection failed` raised from the refused
    # connection): the reader sees the cause under it, a service of theirs that is not running.
    cause = next((c for c in exc.get("causes", []) if _unreachable(set(c["mro"]), c["message"])), None)
    if cause and "builtins.NameError" not in mro:
        return f"{exc['type']} ({message[:80]}), caused by {cause['type']} ({cause['message'][:160]})"
    if VARIABLE_UNSET.search(message):
        return f"its own environment variables ({message[:160]})"
    if PROGRAM_MISSING.search(message):
        return f"a program the library runs on the reader's machine ({message[:160]})"
    if "subprocess.CalledProcessError" in mro and GIT_OUTSIDE_REPOSITORY.match(message):
        return f"the reader's git repository, where git runs ({message[:160]})"
    newer = NEWER_PYTHON_NEEDED.search(message)
    if newer:
        return f"Python {newer.group(1)} or newer, which the library says this needs"
    if exc.get("filename") == "/dev/tty" or exc.get("errno") in (6, 25) or TERMINAL_NEEDED.search(message):
        return "an interactive terminal"  # ENXIO, ENOTTY, or a library saying it needs one
    if "builtins.EOFError" in mro and message == PROMPT_WITHOUT_INPUT:
        return "an interactive terminal, where the reader answers its prompt"
    # The file may be missing under a library's own error (`ValueError: invalid data or filepath`) whose cause is
    # the OSError the reader reads under it.
    for missing in [exc, *exc.get("causes", [])]:
        filename = missing_filename(missing, set(missing.get("mro", [])) | (mro if missing is exc else set()))
        if filename and not filename.startswith("~"):
            return f"the file {filename}, which the page does not create"
    return None


# How libraries written in Rust or C word a missing file they were handed, the path last and no `filename`
# attribute set: `No such file or directory (os error 2): data.parquet`.
MISSING_FILE_MESSAGE = re.compile(r"No such file or directory(?: \(os error 2\))?:\s*['\"]?([^\s'\"]+)['\"]?\s*$")
# How a library says, on a line of its error's message, that a path it was handed is no file: `Invalid file path:
# /data/x.yml`.
NO_FILE_MESSAGE = re.compile(
    r"^(?:invalid|no|missing|unknown)\s+(?:such\s+)?(?:file|path|file\s+path)\b[^:\n]*:\s*['\"]?([^\s'\"]+)['\"]?\s*$",
    re.IGNORECASE | re.MULTILINE,
)


def missing_filename(exc: Message, mro: set[str]) -> str | None:
    """The path of the file not found, from the exception's `filename` or, failing that, its message."""
    if mro & MISSING_FILE and exc.get("filename"):
        return str(exc["filename"])
    if mro & MISSING_FILE:
        named = MISSING_FILE_MESSAGE.search(exc.get("message") or "")
        return named.group(1) if named else None
    # A library's own error may say it in a line of its message, whatever its type.
    named = NO_FILE_MESSAGE.search(exc.get("message") or "")
    return named.group(1) if named else None


def test_suite_file(path: str, error: str) -> Verdict:
    """The example reads a file of the project's test suite, which a reader who installed the library lacks."""
    return Verdict(
        "failure",
        "error",
        error,
        f"`{path}` is a file of the project's own tests, which are not installed with the library: a reader does not "
        "have it. Give the file on the page, or say where to get it.",
    )


def _test_suite_file(exc: Message, mro: set[str]) -> str | None:
    """The file not found, when its relative path is in the project's test suite (`tests/fixtures/a.xml`)."""
    filename = (missing_filename(exc, mro) or "").removeprefix("./")
    if "/" in filename and in_test_suite(filename.split("/")[0]):
        return filename
    return None


def _slip_of_module(name: str, module: str) -> bool:
    """A module name one letter away from the library's (`camel_converrter`): the page misspelt it. Short names
    are too alike by chance to tell."""
    return name != module and len(module) >= 6 and difflib.SequenceMatcher(None, name, module).ratio() >= 0.9


def _unreachable(mro: set[str], message: str) -> bool:
    """What the exception says is missing is the reader's machine: credentials, a service, the network."""
    lowered = message.lower()
    return bool(mro & ENVIRONMENT_EXCEPTIONS) or (
        any(word in lowered for word in ENVIRONMENT_WORDS) and "builtins.NameError" not in mro
    )


def _missing_module(exc: Message, page: PageKnowledge, in_docs: bool, error: str) -> Verdict:
    # A library that raises the error itself often names no module, only a message that names the package.
    named = MODULE_IN_MESSAGE.search(exc.get("message") or "")
    module = exc.get("name") or (named.group(1) if named else "")
    top = module.split(".")[0]
    meant = next((m for m in page.library_modules if in_docs and _slip_of_module(top, m)), None)
    if meant is not None:
        return Verdict(
            "failure",
            "error",
            error,
            f"`{top}` is a slip of {page.release}'s module `{meant}`: write `{meant}`.",
            shared_cause=f"the module {top}",
        )
    if page.is_library_module(module):
        return Verdict(
            "failure",
            "error" if in_docs else "warning",
            error,
            f"`{module}` does not exist in {page.release}.",
            shared_cause=f"the module {module}",
        )
    state, requirement = page.module_state(module)
    if in_test_suite(module) and state != "page" and in_docs and page.verbatim:
        # Typed at the prompt as the docs' own doctest run types it, from the project's repository: a reader who
        # installed the library has no test suite to import from.
        return Verdict(
            "failure",
            "error",
            error,
            f"`{module.split('.')[0]}` is the project's own test suite, which is not installed with the library: a "
            "reader cannot import from it. Define what the example needs on the page, or import it from the library.",
        )
    later = module.split(".")[0] in page.laid_out_later
    if (readers_own(module) or any_module(module)) and (state != "page" or later):
        # Whoever imports it (the example, or the library told its name), it is the reader's to write; a page
        # that lays it out further on has not got to it yet.
        return Verdict(
            "skipped",
            None,
            f"Illustrative: imports `{module}`, which stands for the reader's own code"
            + (" (the page only lays it out later)." if later else "."),
        )
    if state == "failed":
        return Verdict(
            "failure",
            "warning",
            error,
            f"Needs `{requirement}`, which could not be installed (see the page's setup problems).",
            shared_cause=f"the requirement {requirement}",
        )
    if state == "project":
        return Verdict(
            "skipped",
            None,
            f"Illustrative: imports `{module}`, the reader's own project (the entry points of the page's "
            "pyproject.toml name it).",
        )
    if state == "unpublished" or (state == "unknown" and in_docs and not requirement):
        return Verdict(
            "skipped",
            None,
            f"Illustrative: imports `{module}`, which is no published package (the reader's own code).",
        )
    if not in_docs:
        return Verdict(
            "failure",
            "warning",
            error,
            f"{page.library} needs the optional dependency {_package(module)} here, and the page does not say to "
            f"install it: add {_install_line(module, page)} to the page.",
            shared_cause=f"the module {module}",
        )
    if state == "unnamed":
        distribution = distribution_for(module) or module
        extra = page.extras.get(normalized(distribution))
        also = f' (or `pip install "{page.library}[{extra}]"`, whose `{extra}` extra brings it)' if extra else ""
        return Verdict(
            "failure",
            "warning",
            error,
            f"The example imports {_package(module)}, which the page never tells the reader to install: add "
            f"`pip install {distribution}`{also} to the page.",
            shared_cause=f"the module {module}",
        )
    return Verdict(
        "failure",
        "warning",
        error,
        f"`{module}` is not installed; the page should say how to install it.",
        shared_cause=f"the module {module}",
    )


def _package(module: str) -> str:
    """`module`, and the distribution it comes from when that is named otherwise (`yaml` (PyYAML))."""
    distribution = distribution_for(module)
    top = module.split(".")[0]
    shown = f"`{top}`" if top not in NAMESPACES else f"`{module}`"
    if distribution and normalized(distribution) != normalized(top if top not in NAMESPACES else module):
        shown += f" (from the `{distribution}` package)"
    return shown


def _install_line(module: str, page: PageKnowledge) -> str:
    """What the reader runs to get the module: the library's extra that brings it, else its distribution."""
    distribution = distribution_for(module) or module.split(".")[0]
    extra = page.extras.get(normalized(distribution))
    return f'`pip install "{page.library}[{extra}]"`' if extra else f"`pip install {distribution}`"


def _cascade(exc: Message, mro: set[str], page: PageKnowledge) -> Verdict | None:
    """A NameError, AttributeError or ImportError naming what an earlier example defines and never got to
    define (it broke before or at that definition, or was not run): that example's failure, counted there. A
    module that is not there is no name an earlier example defines: an example importing it fails on its own
    import, however the earlier ones that imported it fared."""
    if not mro & {"builtins.NameError", "builtins.AttributeError", "builtins.ImportError"}:
        return None
    if "builtins.ModuleNotFoundError" in mro:
        return None
    return builds_on_unmade([exc.get("missing"), exc.get("name")], page)


def builds_on_unmade(names: Sequence[str | None], page: PageKnowledge, failed: bool = True) -> Verdict | None:
    """The first of the names whose last definition before the example is in one that was not run (or failed, when
    failed: an error naming the name says it was never made): what the example does with it is that example's
    doing, counted there."""
    for name in names:
        if failed and name in page.defined_by_failed:
            index, line = page.defined_by_failed[name]
            return Verdict(
                "skipped",
                None,
                f"Builds on example {index} (line {line}), which failed; counted there.",
                builds_on=index,
            )
        if name in page.defined_by_skipped:
            index, line, reason = page.defined_by_skipped[name]
            return Verdict(
                "skipped", None, f"Builds on example {index} (line {line}), which is not run: {reason}", builds_on=index
            )
    return None


# A name that says it stands for the reader's own object (my_db, your_client, MyException), or for any one of its
# kind, which the reader picks (some_text, SomeItem, render_some_template, a_file_object); the programmer's
# stand-in words (foo, bar, spam) say so on their own.
READERS_OWN_NAME = re.compile(
    r"^_*(?:[mM]y|[yY]our|[sS]ome)(?:_|[A-Z0-9])|_some_|^(?:foo|bar|baz|qux|quux|spam|eggs|ham)\d*$"
    r"|^an?_[a-z]{3,}"  # `a_file_object`, `an_instance`: any one the reader has
)


def never_imported(name: str, index: int, line: int, error: str, module: str = "") -> Verdict:
    """A module of its own (a test module; a file the page shows, `module`) uses a name another example of the
    page defines, without importing it."""
    runs = f"{module} is a module of its own" if module else "pytest runs the file on its own"
    return Verdict(
        "failure",
        "error",
        error,
        f"`{name}` is defined in example {index} (line {line}), but {module or 'the test module'} never imports it: "
        f"{runs}. Import it there.",
    )


def _missing_name(exc: Message, page: PageKnowledge, error: str) -> Verdict:
    name = exc.get("name") or ""
    if page.excerpt:
        return Verdict(
            "skipped",
            None,
            f"Illustrative: an excerpt from inside an async function the page does not show; `{name}` comes from "
            "that function's module.",
        )
    # A slip of a name the reader finds where they look (`type_indentifier` for the library's `type_identifier`,
    # `none` for None) is no stand-in of theirs: importing everything, they still get this NameError.
    slip = next((n for n in (name, *page.unresolved) if n in page.misspelt and not readers_own_name(n, page)), None)
    if slip:
        return misspelt_name(
            slip, page.misspelt[slip], error if slip == name else f"NameError: name '{slip}' is not defined"
        )
    if name in page.fixtures and name not in page.defined_later:
        # A test's body shown alone, with the fixture the page's tests ask for: the reader pastes it into such a
        # test, where only the imports it lacks stop it.
        if page.imports_beside:
            other, module = next(iter(page.imports_beside.items()))
            return _add_import(f"from {module} import {other}", f"NameError: name '{other}' is not defined")
        return Verdict(
            "skipped", None, f"Illustrative: a test's body shown alone; `{name}` is the fixture the page's tests take."
        )
    # A name the page says is the reader's own object is never one to import, whatever module shares its name.
    needed = None if readers_own_name(name, page) else _import_needed(exc, page)
    # The reader meets this name first: one the library or a package of the page exports at its top stops their
    # paste one import away from running, whatever stand-ins for their own objects the block uses after it. A
    # module used by its name (`json.dumps(payload)`) or a name from deep inside a package reads as a sketch; so
    # does a function or class that uses a stand-in besides it: the reader writes their own after that model; and
    # so does a block whose stand-in says it is one (`SomeClass`, `my_db`): a pattern shown on a placeholder.
    provider = (exc.get("provided_by") or [""])[0]
    placeholder = any(readers_own_name(other, page) for other in page.unresolved)
    if (
        needed == f"from {provider} import {name}"
        and "." not in provider
        and name not in page.beside_stand_ins
        and not placeholder
    ):
        return _add_import(needed, error)
    if page.unresolved and (not page.verbatim or all(readers_own_name(n, page) for n in page.unresolved)):
        return _illustrative(page.unresolved[0], page)
    if needed:
        return _add_import(needed, error)
    if page.own_module and name in page.defined_elsewhere:
        return never_imported(name, *page.defined_elsewhere[name], error)
    # A name that says it is the reader's own is theirs here, whatever the page defines by that name later; so is a
    # one-letter name (`x`), which stands for any value: a later `x = 3` is another object, not this one; and so is
    # a name the page next defines under another heading: that section's object, not one this section forgot.
    if name in page.later_in_another_section:
        return _illustrative(name, page)
    if name in page.defined_later and not readers_own_name(name, page) and len(name) > 1:
        index, line = page.defined_later[name]
        return Verdict(
            "failure",
            "warning",
            error,
            f"`{name}` is only defined later, in example {index} (line {line}): a reader following the page has no "
            f"`{name}` yet. Define it before, or say where it comes from.",
            shared_cause=f"the name {name}, defined later",
        )
    if exc.get("suggestions"):
        return Verdict("failure", "error", error, f"`{name}` is not defined{_hint(exc)}")
    if page.verbatim and not readers_own_name(name, page) and name not in page.reached_deep_only:
        # A session shows what the reader types: they type this name too, and get this NameError. One it only
        # reaches deep into is an object of the reader's whose inside it knows (their database handle).
        return Verdict(
            "failure",
            "error",
            error,
            f"`{name}` is defined nowhere: not on the page, not in {page.release}, the standard library or an "
            "installed package. Define it in the session, or fix its spelling.",
            shared_cause=f"the name {name}, defined nowhere",
        )
    return _illustrative(name, page)


def _import_needed(exc: Message, page: PageKnowledge) -> str | None:
    """The import a reader adds for a name never imported: a module of that name, or a module that provides it."""
    name = exc.get("name") or ""
    if name in page.aliases:
        return f"import {page.aliases[name]} as {name}"
    if exc.get("member_import"):
        return f"from {name} import {name}"
    if exc.get("importable") and (name in page.used_as_modules or not exc.get("provided_by")):
        return f"import {name}"
    if exc.get("provided_by"):
        return f"from {exc['provided_by'][0]} import {name}"
    return None


def _add_import(needed: str, error: str) -> Verdict:
    what = f"`{needed.split()[-1]}` is" if needed.startswith("import ") else "it is"
    what = "they are" if "," in needed else what
    return Verdict(
        "failure",
        "warning",
        error,
        f"Add `{needed}` to the example: {what} never imported.",
        import_needed=needed,
        shared_cause=f"the import {needed}",
    )


def typing_never_imported(names: list[str], error: str) -> Verdict:
    """A block that uses names of `typing` it never imports (a method shown alone, its annotations
    `Optional[Request]`): pasted where the reader's module has no such import, its definition is a NameError."""
    return _add_import(f"from typing import {', '.join(names)}", error)


def readers_own_name(name: str, page: PageKnowledge) -> bool:
    """The name says it is the reader's own object (`my_db`, `MyModel`), or the prose around the example does; a
    name the docs import a module under (`dy` for dataframely) is that module wherever else it is met."""
    if name in page.aliases:
        return False
    return name in page.readers_names or bool(READERS_OWN_NAME.search(name))


def _illustrative(name: str, page: PageKnowledge) -> Verdict:
    if name in page.defined_later:
        return Verdict(
            "skipped", None, f"Illustrative: uses `{name}`, the reader's own here (the page only gets to it later)."
        )
    return Verdict(
        "skipped", None, f"Illustrative: uses `{name}`, which neither the page nor any installed package defines."
    )


MISSING_FIXTURE = re.compile(r"fixture '(\w+)' not found")
AVAILABLE_FIXTURES = re.compile(r"available fixtures:([^\n]*)")


def readers_own_fixture(message: str) -> str | None:
    """The fixture pytest could not find, when no fixture it has is close to that name: the test is written
    against the reader's own fixture (`client`, `app`), not a slip of one the page or a plugin gives."""
    missing = MISSING_FIXTURE.search(message)
    available = AVAILABLE_FIXTURES.search(message)
    if not missing:
        return None
    names = [name.strip() for name in available.group(1).split(",")] if available else []
    return None if difflib.get_close_matches(missing.group(1), names, n=1, cutoff=0.75) else missing.group(1)


def _overload_stub(frame: Message) -> bool:
    """The frame is typing's stand-in for a function defined only by `@overload` signatures (or typing_extensions'
    copy of it): the function was never given an implementation."""
    return frame["name"] == "_overload_dummy" and PurePath(frame["filename"]).stem in ("typing", "typing_extensions")


def none_value_shown(expected: str, actual: str, statement: str) -> Verdict | None:
    """A `None` the page shows as the value of an expression that is None, where the prompt prints nothing for
    None: the page tells the reader the value, and the value is that. What the expression printed besides must
    still be what the page shows before the `None`."""
    tree = python_code.parse(textwrap.dedent(statement))
    if tree is None or len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    lines = expected.rstrip().splitlines()
    if not lines or lines[-1].strip() != "None" or actual.rstrip().endswith("None"):
        return None
    if compare("\n".join(lines[:-1]), actual) == "different":
        return None
    return Verdict(
        "success",
        "info",
        "The page shows `None` as the expression's value; the interactive prompt prints nothing for None.",
    )


# A warning as the interpreter writes it to the terminal (`<stdin>:1: DeprecationWarning: …`, or the page's
# shortened `  NaiveArithmeticWarning: …`).
WARNING_LINE = re.compile(r"^\s*(?:\S+:\d+: )?[A-Z]\w*Warning: .*$\n?", re.MULTILINE)


def warning_shown(expected: str, actual: str, where: str) -> Verdict | None:
    """The page shows, among the statement's output, the warning it gives: Python writes warnings to the
    terminal's error stream, not to the output a session compares, and the rest is the page's."""
    rest = WARNING_LINE.sub("", expected)
    if rest == expected or judge_output(rest, actual, where).status == "failure":
        return None
    return Verdict(
        "success",
        "info",
        f"The page shows the warning the statement at {where} gives among its output; Python writes it to the "
        "terminal's error stream.",
    )


def assigned_value_shown(expected: str, assigned: str, where: str) -> Verdict | None:
    """The page shows, under an assignment, the value it assigns, which the prompt never prints: the value is
    the page's (values that change from run to run aside)."""
    if compare(expected, assigned) == "different":
        return None
    return Verdict(
        "success",
        "info",
        f"The page shows the value the statement at {where} assigns; the interactive prompt prints nothing for an "
        "assignment.",
    )


def varies_from_run_to_run(where: str) -> Verdict:
    return Verdict(
        "success",
        "info",
        f"The value at {where} changes from run to run (evaluated again twice, it gave two others, as a random id "
        "or the time does): the page shows one of its values.",
    )


# The first line of a command line's help (argparse's `usage: prog [-h]`, click's `Usage: prog [OPTIONS]`).
HELP_USAGE = re.compile(r"^\s*usage:\s", re.IGNORECASE)
# A terminal's prompt before a command (`$ python cli.py --help`).
TERMINAL_PROMPT = re.compile(r"^\s*[$%]\s+")


def another_exception_shown(shown: str, exc: Message, where: str) -> Verdict:
    """The page shows the message the statement raises under another exception's name: a reader who catches the
    one shown misses the one raised."""
    return Verdict(
        "failure",
        "warning",
        f"It raises {exc.get('type')} ({where}), where the page shows {shown} with the same message.",
        f"Name the exception the library raises ({exc.get('type')}) on the page.",
    )


def left_out_before(line: int, error: str) -> Verdict:
    """A failure after a lone `...` that leaves code out: what that code would make, the block cannot show."""
    return Verdict(
        "skipped",
        None,
        f"Illustrative: an excerpt; the page leaves code out at line {line} (`...`), and what the lines after it use "
        f"may come from there ({error.split(' (line')[0][:160]}). Not a doc defect.",
    )


def another_run_shown(expected: str, actual: str) -> bool:
    """The page shows, under the program, a run with arguments (its help, or a terminal line giving them), and the
    program run as it stands printed no help: the reader sees that when they run it so, not from this run."""
    first = next((line for line in expected.split("\n") if line.strip()), "")
    shown = bool(HELP_USAGE.match(first)) or _runs_with_arguments(first)
    return shown and not any(HELP_USAGE.match(line) for line in actual.split("\n"))


def _runs_with_arguments(line: str) -> bool:
    """A terminal line that runs a program with arguments (`$ python cli.py --help`, `$ tool greet`)."""
    prompt = TERMINAL_PROMPT.match(line)
    words = line[prompt.end() :].split() if prompt else []
    if words[:1] and re.fullmatch(r"python[\d.]*", words[0]):
        words = words[2:] if words[1:2] == ["-m"] else words[1:]
    return len(words) >= 2


def another_run(where: str) -> Verdict:
    return Verdict(
        "success",
        "info",
        f"The page shows the program run with arguments ({where}: its help, or a terminal line giving them), which "
        "its reader sees when they run it so; this run gave none, so it is not compared.",
    )


def judge_output(expected: str, actual: str, where_said: str = "", iterates_a_set: bool = False) -> Verdict:
    """A documented output against what was printed. Code that iterates a set (iterates_a_set) prints its lines in
    an order that changes from run to run: the page's lines in another order are what its reader may see too."""
    match = compare(expected, actual)
    if match == "same":
        return SUCCESS
    if match == "different" and iterates_a_set and same_lines_in_another_order(expected, actual):
        return Verdict(
            "success",
            "info",
            "The output holds the page's lines in another order: the code goes through a set, whose order"
            " changes from run to run (Python salts string hashes anew in every process).",
            None,
        )
    line = differing_line(expected, actual)
    shown = f" The page shows `{line[0][:200]}`; it printed `{line[1][:200]}`." if line else ""
    if match == "format":
        return Verdict(
            "success",
            "info",
            "The output differs from the page only in format (times, addresses, ids, quoting, a traceback's frames)."
            + shown,
            None,
        )
    return Verdict(
        "failure",
        "error",
        "The output differs from what the page shows" + (f" ({where_said})" if where_said else "") + "." + shown,
        "Update the output the page shows, or the code, so they agree.",
    )


# Python's word for a coroutine a call made and nothing awaited (the call did none of its work).
NEVER_AWAITED = re.compile(r"coroutine '([\w.<>]+)' was never awaited")


def judge_warnings(warnings: list[Message]) -> Verdict:
    unawaited = next((found for w in warnings if (found := NEVER_AWAITED.search(w["message"]))), None)
    if unawaited is not None:
        return Verdict(
            "failure",
            "warning",
            f"RuntimeWarning: {unawaited.string}",
            f"`{unawaited.group(1)}` is a coroutine function: called without `await`, it does none of its work. "
            "Add `await`.",
        )
    deprecations = [
        w for w in warnings if w["category"] in ("DeprecationWarning", "FutureWarning", "PendingDeprecationWarning")
    ]
    if not deprecations:
        return SUCCESS
    first = deprecations[0]
    return Verdict(
        "success",
        "info",
        f"{first['category']}: {first['message']}",
        "The example works but uses something deprecated; update it to the recommended API.",
    )


def judge_prints(
    shown: list[python_code.DocumentedPrint], prints: list[Any], example: CodeExample, iterates_a_set: bool = False
) -> Verdict:
    """Each documented print against what that very print wrote (prints: the runner's [line, text] pairs); the
    worst verdict counts."""
    noted = SUCCESS
    for item in shown:
        printed = "".join(text for line, text in prints if item.first_line <= line <= item.last_line)
        where = f"the print at line {example.line + item.first_line - 1}"
        verdict = judge_output(item.text, printed, where, iterates_a_set)
        if verdict.status == "failure":
            return verdict
        if verdict.severity and not noted.severity:
            noted = verdict
    return noted


VALUE_DIFFERS = "The value differs from what the page shows"


def judge_values(said: list[python_code.ValueComment], values: list[Any], example: CodeExample) -> Verdict:
    """Each value a comment shows against the value its statement had (values: the runner's [place, repr] pairs,
    place that of the comment in said). Only a value that is itself a literal is compared: an object's repr is no
    literal, a statement that gave `None` did something else than give the value its comment describes, and text
    shown for a call that gave no text is what it printed."""
    had = dict(values)
    for place, comment in enumerate(said):
        text = had.get(place)
        try:
            value = ast.literal_eval(text) if text else None
        except NOT_A_LITERAL:
            continue
        if (
            value is None
            or (comment.call and isinstance(comment.value, str) and not isinstance(value, str))
            or _shows_value(comment.value, value)
            or compare(repr(comment.value), text or "") != "different"
        ):
            continue
        return Verdict(
            "failure",
            "warning",
            f"{VALUE_DIFFERS} (the comment at line {example.line + comment.line - 1}): "
            f"it shows `{repr(comment.value)[:200]}`; the value is `{(text or '')[:200]}`.",
            "Update the value the comment shows, or the code, so they agree.",
        )
    return SUCCESS


def _shows_value(shown: object, value: object) -> bool:
    """A comment shows the value: equal to it, or, for a string the code makes of JSON, equal to what it holds
    (`to_json()  # {"a": 1}`, the quotes left out)."""
    if isinstance(value, str) and not isinstance(shown, str):
        try:
            return bool(json.loads(value) == shown)
        except ValueError:
            return True  # text that is not JSON: the comment describes it, it does not show it
    return bool(shown == value)


def output_place(example: CodeExample) -> str:
    if example.expected_output_line:
        return f"the output at line {example.expected_output_line}"
    return "the output written in the example"


def exception_type(text: str | None) -> str | None:
    """The exception type a traceback's last line names (`ValueError: ...`, `pkg.Error: ...`)."""
    lines = [line for line in (text or "").strip().split("\n") if line.strip()]
    if not lines or not any("Traceback (most recent call last)" in line for line in lines):
        return None
    match = re.match(r"^([\w.]+)(?::|$)", lines[-1].strip())
    return match.group(1).split(".")[-1] if match else None


def docs_warnings(answer: Message) -> list[Message]:
    """Warnings the example's own code causes (not those a package raises about itself)."""
    return [
        w
        for w in answer.get("warnings", [])
        if not re.search(r"site-packages|dist-packages|/lib/python\d", w.get("filename") or "")
    ]


def adapter_of(module: str, exc: Message) -> bool:
    """The library's module that failed to import `module` is named after it (`extras/aiohttp_limiter.py` for
    aiohttp): an adapter to that package, whose reader uses the package already."""
    frames = exc.get("frames") or []
    words = re.split(r"[/\\._-]", frames[-1].get("filename", "")) if frames else []
    return module.split(".")[0] in words


def optional_module(exc: Message) -> str | None:
    """The module a library went looking for and did not find (an optional dependency), if that is the failure."""
    if exc.get("none_module"):
        return exc["none_module"].split(".")[-1]
    frames = exc.get("frames") or []
    in_package = bool(frames) and frames[-1]["where"] == "package"
    if "builtins.ModuleNotFoundError" in exc.get("mro", []) and in_package:
        # A library that raises the error itself often gives no name, only a message that names the module.
        named = MODULE_IN_MESSAGE.search(exc.get("message") or "")
        module = exc.get("name") or (named.group(1) if named else None)
        # A namespace (google) names no package: the line that failed imports the one meant (google.cloud.x).
        return _imported_under(frames[-1].get("line") or "", module) if module in NAMESPACES else module
    if "builtins.ImportError" in exc.get("mro", []) and in_package and not exc.get("missing"):
        # Or an ImportError of its own that says what to install ("Using X requires pydantic to be installed"), or
        # that rewords the import which failed under it ("Install the x package to use X", from No module named 'x').
        needed = required_installed(exc.get("message") or "") + [
            named.group(1)
            for cause in exc.get("causes", [])
            if "builtins.ModuleNotFoundError" in cause["mro"]
            for named in [MODULE_IN_MESSAGE.search(cause["message"])]
            if named
        ]
        return needed[0] if needed else None
    return None


def _imported_under(line: str, top: str) -> str:
    """What a line of code imports under a top-level name, to its last part (`from google.cloud import bigquery`:
    google.cloud.bigquery, which may be a module or a name in one); the name itself when it imports nothing there."""
    match = re.match(
        rf"\s*(?:from\s+({re.escape(top)}(?:\.\w+)*)\s+import\s+(\w+)|import\s+({re.escape(top)}(?:\.\w+)*))", line
    )
    if not match:
        return top
    return f"{match.group(1)}.{match.group(2)}" if match.group(1) else match.group(3)


# `Module 'attrs' not installed`, `No module named 'yaml'`: a message that names the missing module, or the package
# that brings it (`Module 'python-dotenv' not installed`).
MODULE_IN_MESSAGE = re.compile(r"\bmodule(?: named)? ['\"`]([A-Za-z_][\w.-]*)['\"`]", re.IGNORECASE)


def signature_difference(listed: python_code.ListedSignature, definitions: list[Message]) -> Verdict | None:
    """A signature a reference lists against the library's definitions of that name: a reader calls what the
    page lists, so a parameter the library does not accept is a defect (warning). A required one the page leaves
    out is a shortened listing, which references often show: said (info), the block still not run. None when one
    definition takes what the page lists, or none can be compared."""
    differences = [_differences(listed, d["parameters"]) for d in definitions if d["parameters"] is not None]
    if not differences or not all(differences):
        return None
    real = next(d for d in definitions if d["parameters"] is not None)
    shown = ", ".join(_shown_parameter(p) for p in real["parameters"])
    difference = f"`{listed.name}` {differences[0]}; its parameters are `({shown})` (`{real['where']}`)."
    fix = f"List the signature the library has: `{listed.name.rsplit('.', 1)[-1]}({shown})`."
    if all(d.startswith("needs") for d in differences):
        return Verdict("skipped", "info", f"A fragment: {python_code.SIGNATURES_LISTED}; {difference}", fix)
    return Verdict("failure", "warning", difference, fix)


def signature_not_in_library(name: str, library: str) -> Verdict:
    return Verdict(
        "failure",
        "warning",
        f"The library has no `{name}`: no module of {library} defines it, so a reader cannot call what the page lists.",
        f"Name the function or class {library} has, or remove the signature.",
    )


def signature_of_another(subject: str, listed: str) -> Verdict:
    return Verdict(
        "failure",
        "warning",
        f"The section is about `{subject}`, but the signature it lists is `{listed}`'s: a reader takes it for the "
        f"signature of `{subject}`.",
        f"List the signature of `{subject}`.",
    )


def _differences(listed: python_code.ListedSignature, real: list[list[Any]]) -> str:
    """What a reader calling the listed signature meets: a parameter the definition does not take, or a required
    one the listing leaves out ("" when none). `self` and `cls` are the caller's object, never compared."""
    mine = [p for p in listed.parameters if p.name not in ("self", "cls")]
    theirs = [p for p in real if p[0] not in ("self", "cls")]
    kinds = {kind for _, kind, _ in theirs}
    if "VAR_POSITIONAL" not in kinds and "VAR_KEYWORD" not in kinds:
        names = {name for name, _, _ in theirs}
        unaccepted = [p.name for p in mine if p.kind not in ("VAR_POSITIONAL", "VAR_KEYWORD") and p.name not in names]
        if unaccepted:
            return f"has no parameter `{unaccepted[0]}`"
    listed_kinds, listed_names = {p.kind for p in mine}, {p.name for p in mine}
    for name, kind, has_default in theirs:
        taken_by = "VAR_KEYWORD" if kind == "KEYWORD_ONLY" else "VAR_POSITIONAL"
        if kind.startswith("VAR_") or has_default or name in listed_names or taken_by in listed_kinds:
            continue
        return f"needs `{name}`, which the page leaves out"
    return ""


def _shown_parameter(parameter: list[Any]) -> str:
    name, kind, has_default = parameter
    prefix = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(kind, "")
    return f"{prefix}{name}{'=…' if has_default else ''}"


def mixed_prompts(where: str) -> Verdict:
    """A block that mixes script lines with `>>>` prompt lines (where: the line it mixes them at)."""
    return Verdict(
        "failure",
        "warning",
        f"The example mixes script lines with `>>>` prompt lines ({where}): pasted into a file, the prompts are a "
        "SyntaxError; typed at the interpreter, the lines without a prompt are not run.",
        "Show the example either as a session (every statement after `>>>` or `...`) or as a script (no prompts).",
    )


def library_source_import(relative: str, meant: str, where: str) -> Verdict:
    """A relative import of the library's own module, copied from its source into a reader's script."""
    return Verdict(
        "failure",
        "error",
        "ImportError: attempted relative import with no known parent package" + (f" ({where})" if where else ""),
        f"`{relative}` is the library's own module, imported as its source does: the reader's script is in no "
        f"package. Write `{meant}`.",
    )


def sibling_imported_absolutely(module: str, path: str, sibling: str, error: str) -> Verdict:
    """A module of a package the page lays out imports a sibling by its bare name, as Python 2 allowed."""
    return Verdict(
        "failure",
        "error",
        error,
        f"`import {module}` in `{path}` looks for a top-level module `{module}`, not the page's `{sibling}`: Python 3 "
        f"has no implicit relative imports. Write `from . import {module}`.",
    )


def misspelt_name(name: str, meant: str, error: str) -> Verdict:
    """A name nothing defines that is a slip of one the library or Python has."""
    return Verdict(
        "failure",
        "error",
        error,
        f"`{name}` is defined nowhere: it is a misspelling of `{meant}`. Fix the spelling.",
    )


def misspelt_special_method(name: str, meant: str, where: str) -> Verdict:
    """A method spelt like a special method, with its underscores wrong: Python never calls it."""
    return Verdict(
        "failure",
        "error",
        f"`{name}` ({where}) is not `{meant}`: Python never calls it, so the class does not do what the page says.",
        f"Rename `{name}` to `{meant}`.",
    )


def annotated_not_assigned(name: str, where: str) -> Verdict:
    """A setting written `NAME: value`: Python takes the value for an annotation and defines no name."""
    return Verdict(
        "failure",
        "warning",
        f"`{name}:` ({where}) annotates `{name}` with its value and assigns nothing: a module loaded for its "
        f"settings defines no `{name}`, so the setting is silently ignored.",
        f"Write `{name} = ...` (an `=` where the colon is).",
    )


def shown_indented(spaces: int) -> Verdict:
    """An example the page shows with every line indented."""
    return Verdict(
        "failure",
        "warning",
        f"As the page shows it, every line is indented by {spaces} spaces: pasted as is, it fails with "
        "IndentationError: unexpected indent.",
        "Remove the indentation from the block's lines.",
        shared_cause=f"indented by {spaces} spaces",
    )


def oldest_python(requires_python: str) -> str | None:
    """The oldest Python 3 a Requires-Python specifier lets in ("3.9" for ">=3.9"), None if it says nothing."""
    try:
        allowed = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return None
    if not requires_python.strip():
        return None
    return next(
        (f"3.{minor}" for minor in range(40) if any(allowed.contains(f"3.{minor}.{patch}") for patch in (0, 99))),
        None,
    )


def newer_syntax(newer: tuple[str, str], page: PageKnowledge, where_said: str, named: str | None) -> Verdict:
    """Syntax of a newer Python than this one: a doc defect when the library supports older Pythons and the
    page does not name the Python it needs (named: the one it names near the example), the reader's business
    otherwise."""
    version, what = newer
    oldest = oldest_python(page.requires_python)
    if named is not None and _minor(named) >= _minor(version):
        return Verdict("skipped", None, f"Needs Python {version} or newer, as the page says: it uses {what}.")
    if oldest is None or _minor(oldest) >= _minor(version):
        return Verdict(
            "skipped",
            None,
            f"Needs Python {version} or newer: it uses {what}. Not a doc defect on the reader's newer Python.",
        )
    return Verdict(
        "failure",
        "warning",
        f"It needs Python {version} ({what}), but {page.library} supports Python {oldest}: a reader on a Python "
        f"older than {version} gets a SyntaxError ({where_said}).",
        f"Say on the page that the example needs Python {version}, or use syntax Python {oldest} has.",
        shared_cause=f"Python {version}: {what}",
    )


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def shows_exception(want: str, exc: Message) -> bool:
    """The page shows a traceback of this exception, in any form (exception groups, abbreviated frames), or only
    its last line (`ValueError: ...` where the statement's output goes, which doctest cannot read but a reader
    sees is the error they get), by its class's name or another the library gives it."""
    names = "|".join(map(re.escape, [exc.get("mro", [exc["type"]])[0].rsplit(".", 1)[-1], *exc.get("aliases", [])]))
    if "Traceback" in want:
        return bool(re.search(rf"\b(?:{names})\b", want))
    return bool(re.match(rf"(?:[\w.]+\.)?(?:{names}):", want.lstrip()))


def shown_exception_message(want: str, exc: Message, where: str) -> Verdict:
    """The page shows the error this statement raises; what its message says is the page's too, or a note (as
    for a traceback doctest reads: the type is what the reader relies on)."""
    lines = [line.strip() for line in want.strip().split("\n") if line.strip()]
    shown = re.sub(r"^[\w.]+:\s*", "", lines[-1]) if lines else ""
    if not shown or compare(shown, exc.get("message", "")) != "different":
        return SUCCESS
    return Verdict(
        "success",
        "info",
        f"The exception's message differs from the page's ({where}); its type is the same.",
        f"The page shows `{shown[:200]}`; it says `{exc.get('message', '')[:200]}`.",
    )


def raised_as_said(said: str, exc: Message) -> bool:
    """The exception is the one the page says the example raises: that type or a subclass of it ("Exception":
    any exception), by its name or another the library gives it."""
    named = [name.rsplit(".", 1)[-1] for name in exc.get("mro", [exc.get("type", "")])]
    return said in named or said in exc.get("aliases", [])


def did_not_raise(said: str) -> Verdict:
    what = "an exception" if said == "Exception" else said
    return Verdict(
        "failure",
        "warning",
        f"The page says this raises {what}; it did not.",
        "Correct what the page says about the example, or the example, so they agree.",
    )


def repeats_shown_error(error: str, index: int, line: int, unused: str) -> Verdict:
    return Verdict(
        "failure",
        "warning",
        f"It raises the very error example {index} (line {line}) raised, `{error[:200]}`, and never uses "
        f"`{unused}`, which it defines: the page shows the same failure twice, not the one this block is about.",
        f"Use `{unused}` in the statement that is to fail.",
    )


def outside_command(command: str, exc: Message) -> Verdict:
    return Verdict(
        "skipped",
        None,
        f"A file the library's own command runs (`{command}`, as the docs show): run as a plain script, without "
        f"what that command sets up for it, it stops with {exc.get('type')}: {exc.get('message', '')[:200]}. "
        "Not a doc defect; run it with the command.",
    )


def still_running(timeout: float) -> Verdict:
    return Verdict(
        "skipped", None, f"It did not finish within {timeout:g} s (a server, or a wait for input): run it by hand."
    )


def same_exception(want: str, got: str) -> bool:
    expected = exception_type(want)
    return expected is not None and expected == exception_type(got)


def runner_trouble(answer: Message) -> Verdict:
    status = answer.get("status")
    if status == "process_limit":
        return Verdict(
            "failure",
            "error",
            "It started processes without end and reached the sandbox's "
            f"limit of {answer.get('limit')} processes; it was killed.",
            "Make the example stop starting processes.",
        )
    if status == "disk_limit":
        return Verdict(
            "failure", "error", "It filled the sandbox's disk and was killed.", "Make the example write less."
        )
    if status == "crashed":
        return Verdict(
            "failure",
            "warning",
            f"The interpreter crashed (exit {answer.get('exit')}).",
            "A crash in compiled code: check the library's build for this platform.",
        )
    if status == "cancelled":
        return Verdict("skipped", None, "The validation was cancelled.")
    return Verdict(
        "failure",
        "warning",
        f"The page runner stopped: {answer.get('message', status)}",
        "Rerun the validation; if it persists, report it.",
    )


def syntax_problem(code: str) -> str:
    try:
        compile(code, "example", "exec", flags=python_code.PARSE_FLAGS)
    except SyntaxError as exc:
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno} of the example)"
    except ValueError as exc:
        return f"ValueError: {exc}"
    return "SyntaxError"
