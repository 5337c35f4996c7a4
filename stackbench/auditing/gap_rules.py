"""The rule-based auditor's rules: from what a step says (StepPlan) and what happened when it was followed
(the outcome of each action), the gaps a newcomer would hit, each with its evidence.

Severities follow the audit spec: critical blocks progress, warning confuses or costs extra work, info is a
minor improvement.

One module over 500 lines, on purpose: it is the one rule book, every rule reading the same plan, outcomes,
history and folders and returning Findings; the largest rule (why a command failed) is read beside the others
that decide which findings a step keeps."""

import ast
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stackbench.auditing.step_reading import Action, StepPlan, defines_only, env_vars_used
from stackbench.auditing.terminal import CommandResult
from stackbench.docs.shell_words import BASELINE_TOOLS, TOOL_NAMES, command_words, is_setup_only, shell_definitions
from stackbench.docs.tutorial_text import ENV_ASSIGNED
from stackbench.formats.walkthrough import GAP_SEVERITY
from stackbench.lib.markdown import without_fenced_blocks
from stackbench.lib.output_compare import compare, missing_lines
from stackbench.sandbox.files import SandboxFiles

SKIPPED_FOLDERS = frozenset(
    {"node_modules", ".venv", "venv", ".git", "__pycache__", "site-packages", ".tox", "dist", "build"}
)
INSTALL_COMMAND = re.compile(
    r"\b(?:pip3?|uv\s+pip|pipx|uv\s+tool|npm|pnpm|yarn|cargo|brew|apt(?:-get)?|gem|go)\s+"
    r"(?:install|add|get)\s+(.+)"
)


@dataclass
class Finding:
    gap_type: str
    severity: str
    description: str
    suggested_fix: str
    context: str
    key: str
    blocks: bool = False  # the reader cannot go on: later steps may fail because of it

    def arguments(self) -> dict:
        return {
            "gap_type": self.gap_type,
            "severity": self.severity,
            "description": self.description,
            "suggested_fix": self.suggested_fix,
            "context": self.context,
        }


@dataclass
class Outcome:
    action: Action
    result: CommandResult | None = None
    skipped: str = ""
    replaced_by: str = ""  # the command the reader used instead, when this one's tool was missing

    @property
    def failed(self) -> bool:
        return self.result is not None and not self.result.ok

    @property
    def run(self) -> CommandResult:
        """What running the action gave, for an outcome the rules know was run (failed, or went well)."""
        if self.result is None:
            raise ValueError(f"the action was not run: {_short(self.action.text)}")
        return self.result


@dataclass
class History:
    """What the reader has been shown and has done so far."""

    seen_text: str = ""
    library: str = ""  # the library the walkthrough is about, and its version
    library_version: str = ""
    exported_env: set[str] = field(default_factory=set)
    installed: set[str] = field(default_factory=set)
    reported_tools: set[str] = field(default_factory=set)
    shell_definitions: set[str] = field(default_factory=set)
    reported_keys: set[str] = field(default_factory=set)
    # The blocking gaps so far (step, what it left missing, description): a later failure whose output names
    # what one of them left missing is its consequence, and says so; any other failure is its own gap.
    blocking: list[tuple[int, str, str]] = field(default_factory=list)
    environment_notes: dict[int, list[str]] = field(default_factory=dict)
    current_step: int = 0
    # The Python files the reader wrote, with the functions and classes each defines: a later block without a
    # file name that defines the same ones is that file's next version (a tutorial growing `main.py`).
    python_files: dict[str, set[str]] = field(default_factory=dict)
    # What each command printed at each step it ran in: output shown later that matches an earlier run belongs
    # to the state before the steps in between changed things.
    printed: dict[str, list[tuple[int, str]]] = field(default_factory=dict)

    def earlier_state_shown(self, action: Action, output: str) -> Finding | None:
        """A logical-flow gap when the page shows, for a command that now fails or prints something else, what
        the same command printed at an earlier step."""
        expected = action.expected_output or ""
        if action.kind != "command" or not expected.strip():
            return None
        # The same command, or another one run on the same file (`python main.py`, `typer main.py run`).
        files = set(FILE_ARGUMENT.findall(action.text))
        related = [
            (command, runs)
            for command, runs in self.printed.items()
            if command == action.text or files & set(FILE_ARGUMENT.findall(command))
        ]
        for command, runs in related:
            for step, earlier in runs:
                if missing_lines(expected, earlier):
                    continue
                return Finding(
                    "logical_flow",
                    "warning",
                    f"The page shows what `{_short(command)}` printed at step {step}, but the steps since then "
                    "changed what it runs, so following the page in order gives something else.",
                    "Show the output for the reader's state at this point, or tell them what to restore first.",
                    f"Shown:\n{expected.strip()[:600]}\nPrinted now:\n{output.strip()[-1200:]}",
                    f"earlier:{action.text[:120]}",
                )
        return None

    def library_from_npm(self, also_seen: str = "") -> bool:
        """Whether the page (so far, and also_seen) gets its library from npm (with npm, npx, yarn or pnpm):
        Node's tools are then what its reader is assumed to have, as Python's are for a PyPI library."""
        return bool(self.library) and bool(
            re.search(
                r"\b(?:npm\s+(?:install|i|add)|npx|yarn\s+(?:global\s+)?add|pnpm\s+add)\b[^\n`]*?\s"
                rf"{re.escape(self.library)}(?:@[\w.^~-]+)?(?![\w./-])",
                self.seen_text + "\n" + also_seen,
            )
        )

    def file_written(self, path: str, code: str) -> None:
        if path.endswith(".py"):
            self.python_files[path] = functions_and_classes(code)

    def next_version_of(self, code: str) -> str | None:
        """The file the reader wrote that this unnamed block is a new version of, if any (the latest one): a whole
        program (it imports or runs something, not a lone signature shown to explain it) defining the same
        functions or classes."""
        try:
            body = ast.parse(code).body
        except SyntaxError:
            return None
        if all(isinstance(node, DEFINITIONS) for node in body):
            return None
        names = {node.name for node in body if isinstance(node, DEFINITIONS)}
        return next((path for path, defined in reversed(self.python_files.items()) if names & defined), None)

    def remember(self, step: dict, plan: StepPlan, outcomes: list[Outcome], findings: Sequence["Finding"] = ()) -> None:
        self.seen_text += "\n" + (step.get("title") or "") + "\n" + plan.reader_text
        self.reported_keys |= {finding.key for finding in findings}
        for finding in findings:
            missing = finding.key.partition(":")[2]
            if finding.blocks and finding.key.startswith(EVIDENCE_KEYS) and missing:
                self.blocking.append((step.get("step_number", 0), missing, finding.description))
        for outcome in outcomes:
            text = outcome.action.text
            if outcome.result is not None and outcome.action.kind == "command":
                # A command run again after a fix (`pip install uv && uv run main.py`) printed for the command.
                typed = text.rsplit(" && ", 1)[-1] if outcome.action.source == "fallback" else text
                self.printed.setdefault(typed, []).append((self.current_step, outcome.result.output))
            if outcome.action.kind in ("command", "background"):
                self.exported_env |= set(ENV_ASSIGNED.findall(text))
                self.shell_definitions |= shell_definitions(text)
                for match in INSTALL_COMMAND.finditer(text):
                    self.installed |= {
                        word.split("==")[0].split("[")[0].lower()
                        for word in match.group(1).split()
                        if not word.startswith("-")
                    }

    def cause_named_in(self, output: str) -> tuple[int, str] | None:
        """The latest earlier blocking gap whose missing thing (a tool, module, file or name) this output names
        (step, description), or None: the failure is then its own gap."""
        for step, missing, description in reversed(self.blocking):
            if re.search(rf"(?<![\w.-]){re.escape(missing)}(?![\w-])", output):
                return step, description
        return None


FILE_ARGUMENT = re.compile(r"(?<![\w/.-])[\w./-]+\.(?:py|js|mjs|ts|rb|sh|go|rs|java|php)\b")
NODE_TOOLS = frozenset({"node", "npm", "npx"})
# The gaps whose key names what they leave missing: a later failure that names it is their consequence.
EVIDENCE_KEYS = ("tool:", "module:", "path:", "name:", "env:")


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def functions_and_classes(code: str) -> set[str]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {node.name for node in tree.body if isinstance(node, DEFINITIONS)}


def _short(command: str, limit: int = 80) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


# Lines a tool prints after every failure, whatever it was: they say nothing of the cause.
BOILERPLATE = re.compile(
    r"A complete log of this run can be found|^npm (?:error|ERR!)\s*$|For more information|Run with --\w+|"
    r"^note: This error originates|^hint:|^\[end of output\]",
    re.IGNORECASE,
)


def _last_error_line(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip() and not BOILERPLATE.search(line)]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception|Exit)\b.*:|^error\b|^fatal\b|^E\s", line, re.IGNORECASE):
            return line[:300]
    return lines[-1][:300] if lines else ""


def failure_signature(error: str) -> str:
    """What makes two failures the same failure: their error line with the numbers and paths that differ
    between runs and folders masked (`npm error code ENOENT … /home/reader/work/package.json`)."""
    masked = re.sub(r"\S*/\S*", "/…", error)
    return re.sub(r"\d+", "0", masked).strip().lower()[:160]


@dataclass
class Folders:
    """The reader's folders as the rules may look at them: the sandbox's files (looked at without following a
    link: where a link points is the run's business, not a host path the rules could probe), and the work folder
    and the shell's folder as paths inside."""

    files: SandboxFiles
    work: str
    cwd: str

    def exists(self, inside: str) -> bool:
        """Whether something is at inside (a link counts, whatever it points to; outside the reader's folders is
        not for the rules to judge, so it counts too)."""
        try:
            return self.files.kind(inside) is not None
        except OSError:
            return True

    def find(self, name: str) -> str | None:
        return self.files.find(name, self.work, skip=SKIPPED_FOLDERS)

    def relative(self, inside: str) -> str:
        return posixpath.relpath(inside, self.work)


# A command that waited for a person at the keyboard: a prompt cut off by the closed input.
INTERACTIVE = re.compile(
    r"Aborted!\s*$|EOFError: EOF when reading a line|Inappropriate ioctl for device|not a (?:tty|terminal)|"
    r"requires an interactive|stdin is not a TTY|Cannot prompt|input device is not a TTY|ERR_TTY_INIT_FAILED|"
    r"^[A-Z][^\n]{0,80}\[[^\]\n]{0,40}\]:[ \t]*(?:$|Error|error|Aborted)",
    re.IGNORECASE | re.MULTILINE,
)


def classify_failure(outcome: Outcome, history: History, folders: Folders) -> Finding:
    """Why an action failed, as the reader would experience it."""
    action, result = outcome.action, outcome.run
    output = result.output
    what = "the code" if action.kind == "python" else f"`{_short(action.text)}`"
    evidence = result.evidence()
    if action.kind == "request":
        answered = result.exit_code != 7
        return Finding(
            "execution_error",
            "critical",
            f"{action.text} answers {output.strip().splitlines()[0]}."
            if answered
            else f"The server this step starts never answers at {action.text}.",
            "Fix what the page serves, or the steps before it, so the URL works as the step says."
            if answered
            else "Say which address and port the server listens on, and what it needs before it starts.",
            evidence,
            f"url:{action.text}",
        )
    if action.kind == "tree":
        return Finding(
            "logical_flow",
            "warning",
            f"The page shows the files following it makes, but they are not there: {output.strip()}.",
            "Show the files as the steps make them, or the choice (a folder, an option) that gives the ones shown.",
            evidence,
            # What it leaves missing, for later failures that name it (see History.cause_named_in).
            f"path:{(re.findall(r'`([^`]+)`', output) or ['tree'])[0]}",
        )
    if action.kind == "compare":
        return Finding(
            "execution_error",
            "warning",
            f"The page shows what `{action.path}` holds at this point, but the file the steps made differs: "
            f"{' '.join(line.strip() for line in output.splitlines()[:2])}",
            "Show the file as the steps make it (or the step that makes it so).",
            evidence,
            f"compare:{action.path}",
        )
    if result.timed_out:
        return Finding(
            "execution_error",
            "critical",
            f"{what} did not finish within {result.duration:.0f} s.",
            "If it keeps running (a server or a watcher), say so and tell the reader to continue in a second "
            "terminal; otherwise say how long it takes.",
            evidence,
            f"timeout:{action.text}",
        )
    if result.process_limit:
        return Finding(
            "execution_error",
            "critical",
            f"The processes of this step kept multiplying until the sandbox's process limit stopped {what}; "
            "a reader's machine would grind to a halt.",
            "Remove whatever starts processes without end (a fork bomb, a runaway loop of background jobs).",
            evidence,
            f"process_limit:{action.text[:120]}",
        )
    if INTERACTIVE.search(output):
        return Finding(
            "clarity",
            "info",
            f"{what} asks questions the page does not answer; the auditor (no keyboard) could not go on with it.",
            "Give the answers a newcomer should type, or the flags that make it non-interactive.",
            evidence,
            f"interactive:{action.text[:120]}",
        )
    not_found = re.search(r"(?:^|\n)(?:\S+: )*(?:line \d+: )?([\w.+-]+): (?:command )?not found", output)
    if result.exit_code == 127 or not_found:
        words = command_words(action.text)
        tool = not_found.group(1) if not_found else (words[0] if words else action.text.split()[0])
        mentioned = _mentions(history.seen_text, tool)
        description = (
            f"`{tool}` is not installed and no step says to install it."
            if not mentioned
            else f"`{tool}` is mentioned but no step installs it, so {what} fails."
        )
        return Finding(
            "prerequisite",
            "critical",
            description,
            f"Add a prerequisite (before this step) that installs `{tool}`, with the version this tutorial needs.",
            evidence,
            f"tool:{tool}",
        )
    module = re.search(r"ModuleNotFoundError: No module named '([^']+)'", output)
    if module:
        name = module.group(1).split(".")[0]
        if name.lower() not in history.installed:
            return Finding(
                "prerequisite",
                "critical",
                f"The Python package that provides `{name}` is never installed.",
                f"Add an install step (for example `pip install {name}`) before this one.",
                evidence,
                f"module:{name}",
            )
    missing = re.search(
        r"No such file or directory: '([^']+)'|can't open file '([^']+)'|cannot access '([^']+)'|"
        r"(?:^|\n)(?:\S+: )?([^\s:'\"]+): No such file or directory|ENOENT[^']*'([^']+)'",
        output,
    )
    if missing:
        path = next(group for group in missing.groups() if group)
        name = Path(path).name
        found = folders.find(name) if name else None
        if found is None:
            return Finding(
                "logical_flow",
                "critical",
                f"`{path}` is used here, but no earlier step creates it.",
                f"Add a step before this one that creates `{path}` (and show its content), or explain "
                "where the reader gets it.",
                evidence,
                f"path:{name}",
            )
        where = folders.relative(posixpath.dirname(found))
        return Finding(
            "logical_flow",
            "warning",
            f"`{path}` exists in `{where}`, but this step runs from `{folders.relative(folders.cwd)}`.",
            "Say which folder the reader should be in for this step (or add the `cd`).",
            evidence,
            f"path:{name}",
        )
    undefined = re.search(r"NameError: name '([^']+)' is not defined", output)
    if undefined:
        name = undefined.group(1)
        return Finding(
            "logical_flow",
            "critical",
            f"`{name}` is used here, but no earlier step defines it.",
            f"Define `{name}` in this step or show the earlier code that creates it.",
            evidence,
            f"name:{name}",
        )
    env_missing = re.search(r"KeyError: '([A-Z][A-Z0-9_]+)'", output)
    if env_missing and "environ" in output:
        name = env_missing.group(1)
        return Finding(
            "prerequisite",
            "critical",
            f"The environment variable `{name}` must be set, but no step says so.",
            f"Tell the reader to set `{name}` (and where its value comes from) before this step.",
            evidence,
            f"env:{name}",
        )
    if re.search(r"\bSyntaxError\b|\bIndentationError\b", output) and action.kind == "python":
        return Finding(
            "execution_error",
            "critical",
            f"The code in this step is not valid Python: {_last_error_line(output)}",
            "Fix the code block so it runs as shown.",
            evidence,
            f"syntax:{action.text[:60]}",
        )
    error = _last_error_line(output)
    detail = f": {error}" if error else ""
    return Finding(
        "execution_error",
        "critical",
        f"{what} fails (exit {result.exit_code}){detail}",
        "Fix the command or code, or state what the reader must have done first.",
        evidence,
        # Repeats are the same failure, not the same command: one gap, where it first shows.
        f"fail:{failure_signature(error)}" if error else f"fail:{action.text[:120]}",
    )


def _mentions(text: str, tool: str) -> bool:
    names = TOOL_NAMES.get(tool, (tool,))
    return any(re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text, re.IGNORECASE) for name in names)


# Failures of the auditing machine's network, not of the docs: a host that does not resolve or answer.
NETWORK_FAILURE = re.compile(
    r"Could not resolve host|Temporary failure in name resolution|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|"
    r"Name or service not known|Network is unreachable|No route to host|Failed to establish a new connection|"
    r"nodename nor servname|ETIMEDOUT|ECONNRESET|EAI_AGAIN|Connection timed out|Could not connect to server|"
    r"Max retries exceeded with url|network access is not available|ProxyError|SSL: CERTIFICATE_VERIFY_FAILED|"
    r"unable to get local issuer certificate",
    re.IGNORECASE,
)
# A registry that has no such version or tag (`vitepress@next` where the mirror lists only `latest`).
VERSION_UNAVAILABLE = re.compile(
    r"\bnotarget\b|No matching version found for|\bETARGET\b|Could not find a version that satisfies the requirement|"
    r"No matching distribution found for",
)
LOCAL_HOST = re.compile(r"localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]")


def environment_failure(outcome: Outcome) -> str | None:
    """Why a failure is the auditing machine's (its network), or None when the docs may be to blame."""
    output = outcome.run.output
    match = NETWORK_FAILURE.search(output)
    if match is None or outcome.action.kind == "request" or LOCAL_HOST.search(output[: match.end()][-300:]):
        return None
    return f"`{_short(outcome.action.text)}` could not reach the network from the auditing machine ({match.group(0)})"


def assess_step(
    step: dict, plan: StepPlan, outcomes: list[Outcome], history: History, folders: Folders
) -> list[Finding]:
    """Critical and warning gaps come only from what following the step showed; what the text alone suggests
    is info, at most one of a kind per step."""
    number = step.get("step_number", 0)
    findings: list[Finding] = []
    failures = [o for o in outcomes if o.failed]
    for outcome in failures:
        note = environment_failure(outcome)
        if outcome.replaced_by and VERSION_UNAVAILABLE.search(outcome.run.output) and history.library_version:
            note = (
                f"`{_short(outcome.action.text)}` asks the registry for a version of {history.library} it does not "
                f"have here; the audited version ({history.library_version}) was installed instead"
            )
        if note:
            history.environment_notes.setdefault(number, []).append(note)
            continue
        finding = history.earlier_state_shown(outcome.action, outcome.run.output) or classify_failure(
            outcome, history, folders
        )
        finding.blocks = finding.severity == "critical" or outcome.action.kind == "tree"
        if outcome.replaced_by.startswith("yes ''"):
            finding.blocks = False
            finding.description += " The auditor answered each with its default (Enter) in a terminal to go on."
        elif outcome.replaced_by:
            finding.severity, finding.blocks = "warning", False
            fix, _, _ = outcome.replaced_by.partition(" && ")
            finding.description += (
                f" Fixed by `{fix}` to go on, as a reader would."
                if re.match(r"(?:python3 -m pip|npm) install\b", fix)
                else f" The step's other way (`{_short(outcome.replaced_by)}`) was followed instead."
            )
        else:
            cause = history.cause_named_in(outcome.run.output)
            if cause is not None:
                finding.severity, finding.blocks = "info", False
                finding.description = f"A consequence of step {cause[0]} ({cause[1]}) {finding.description}"
        findings.append(finding)
    ran = [o for o in outcomes if o.result is not None and o.result.ok]
    seen_now = history.seen_text + "\n" + plan.reader_text

    if not failures:
        findings += _documented_output(plan, ran, history)
        effective = [
            o
            for o in ran
            if o.action.kind == "background"
            or (o.action.kind == "python" and o.action.mode == "exec" and not defines_only(o.action.text))
            # An install says itself whether it worked (it fails loudly); other commands may not.
            or (
                o.action.kind == "command"
                and not is_setup_only(o.action.text)
                and not INSTALL_COMMAND.search(o.action.text)
            )
        ]
        if effective and not plan.has_verification:
            findings.append(
                Finding(
                    "completeness",
                    "info",
                    "Nothing tells the reader how to check that this step worked.",
                    "Show the expected output, or add a check (a command and what it prints).",
                    "\n\n".join(o.run.evidence(max_lines=8) for o in effective[:3]),
                    "verify",
                )
            )

    for outcome in ran:
        if outcome.action.kind not in ("command", "background") or outcome.action.source != "content":
            continue
        defined = history.shell_definitions | shell_definitions(outcome.action.text)
        for tool in command_words(outcome.action.text):
            if (
                tool in BASELINE_TOOLS
                or (tool in NODE_TOOLS and history.library_from_npm(plan.reader_text))
                or "/" in tool
                or tool in history.reported_tools
                or tool in defined
                or tool.lower() in history.installed
                or _mentions(without_fenced_blocks(seen_now), tool)
            ):
                continue
            history.reported_tools.add(tool)
            findings.append(
                Finding(
                    "prerequisite",
                    "info",
                    f"The step runs `{tool}`, which the tutorial never mentions installing (it was on the "
                    "auditing machine, so this is a reminder, not a failure).",
                    f"List `{tool}` (and the version needed) in the prerequisites.",
                    outcome.run.evidence(max_lines=5),
                    f"tool:{tool}",
                )
            )

    for outcome in outcomes:
        if outcome.action.source != "content":
            continue
        for name in sorted(env_vars_used(outcome.action)):
            if name in history.exported_env or re.search(
                r"\b" + re.escape(name) + r"\b", without_fenced_blocks(seen_now)
            ):
                continue
            findings.append(
                Finding(
                    "prerequisite",
                    "info",
                    f"`{name}` is read from the environment, but no step says to set it.",
                    f"Tell the reader to set `{name}` before this step and where its value comes from.",
                    f"Used in: {_short(outcome.action.text, 200)}",
                    f"env:{name}",
                )
            )

    findings += _clarity(plan, outcomes)
    if plan.unlinked_references:
        findings.append(
            Finding(
                "cross_reference",
                "info",
                "The step refers to other documentation without linking to it.",
                "Link the page or section it refers to.",
                "\n".join(f"“{s}”" for s in plan.unlinked_references[:3]),
                "xref",
            )
        )
    findings += _missing_paths(plan, outcomes, folders)
    return _one_per_cause(findings, history)


def _documented_output(plan: StepPlan, ran: list[Outcome], history: History) -> list[Finding]:
    findings = []
    everything = "\n".join(o.run.output for o in ran)
    for expected in plan.expected_outputs:
        if ran and expected not in everything and missing_lines(expected, everything):
            findings.append(
                Finding(
                    "execution_error",
                    "warning",
                    f"The step says the reader will see `{expected}`, but following it printed something else.",
                    "Update the expected output in the docs (or the code that prints it).",
                    "\n\n".join(o.run.evidence(max_lines=10) for o in ran[-2:]),
                    f"output:{expected}",
                )
            )
    differing = []
    for outcome in (o for o in ran if _output_differs(o)):
        earlier = history.earlier_state_shown(outcome.action, outcome.run.output)
        if earlier is not None:
            findings.append(earlier)
        else:
            differing.append(outcome)
    if differing:
        # One gap for the step: its shown outputs usually go wrong together, for one reason.
        first = differing[0]
        more = f" (and {len(differing) - 1} more)" if len(differing) > 1 else ""
        findings.append(
            Finding(
                "execution_error",
                "warning",
                f"The output the step shows for `{_short(first.action.text)}`{more} differs from what it prints "
                "when the tutorial is followed in order.",
                "Update the output shown (or the code before it, if the reader's state is not what the page assumes).",
                "\n\n".join(
                    f"Shown:\n{(o.action.expected_output or '').strip()[:1000]}\nPrinted:\n{o.run.evidence(max_lines=15)}"
                    for o in differing[:3]
                ),
                f"output:{first.action.text[:80]}",
            )
        )
    return findings


def raised_as_shown(action: Action, output: str) -> bool:
    """The statement raised the exception its page shows (compared by type, as a reader would)."""
    shown = (action.expected_output or "").strip()
    if action.mode != "single" or not shown.startswith("Traceback (most recent call last)"):
        return False
    exception = shown.splitlines()[-1].split(":", 1)[0].strip()
    return bool(exception) and bool(re.search(rf"(?m)^(?:\w+\.)*{re.escape(exception.split('.')[-1])}\b", output))


def _output_differs(outcome: Outcome) -> bool:
    expected = outcome.action.expected_output
    if not expected:
        return False
    if outcome.action.mode == "single":
        if raised_as_shown(outcome.action, outcome.run.output):
            return False
        return compare(expected, outcome.run.output) == "different"
    shown = [line for line in expected.splitlines() if line.strip() and line.strip() not in ("...", "…")]
    return len(missing_lines(expected, outcome.run.output)) * 2 > len(shown)


def _clarity(plan: StepPlan, outcomes: list[Outcome]) -> list[Finding]:
    """What the reader's text alone shows: vague wording, a block with no file, an unexplained placeholder.
    Work that only the operations mention is done, but it is not the reader's problem."""
    findings = []
    vague = [p for p in plan.vague_phrases if not any(p != other and p in other for other in plan.vague_phrases)]
    if vague and plan.has_instruction:
        findings.append(
            Finding(
                "clarity",
                "info",
                f"Vague wording a newcomer cannot act on: {', '.join(repr(p) for p in vague)}.",
                "Replace it with the concrete setting, value or command.",
                plan.reader_text.strip()[:1000],
                "vague",
            )
        )
    for block in plan.unplaced_blocks:
        findings.append(
            Finding(
                "clarity",
                "info",
                "A code block is given without saying which file it goes in.",
                "Name the file (and where in it) the block belongs.",
                block,
                f"unplaced:{block}",
            )
        )
    for placeholder, explained in plan.placeholders:
        if not explained:
            findings.append(
                Finding(
                    "clarity",
                    "warning",
                    f"`{placeholder}` is a placeholder the step never explains, so the command cannot be run as shown.",
                    f"Say what to put in place of `{placeholder}` and where to find it.",
                    next((o.action.text for o in outcomes if placeholder in o.action.text), placeholder),
                    f"placeholder:{placeholder}",
                )
            )
    return findings


def _missing_paths(plan: StepPlan, outcomes: list[Outcome], folders: Folders) -> list[Finding]:
    findings = []
    for path in dict.fromkeys(plan.paths_to_use):
        if path.startswith(("/", "~", "..")):
            continue
        if folders.exists(posixpath.join(folders.cwd, path)) or folders.exists(posixpath.join(folders.work, path)):
            continue
        if folders.find(posixpath.basename(path)) is not None:
            continue
        if any(path in (o.action.path or "") for o in outcomes):
            continue
        findings.append(
            Finding(
                "logical_flow",
                "info",
                f"The step tells the reader to use `{path}`, but nothing of that name exists after following the steps "
                "so far.",
                f"Create `{path}` in an earlier step, or say where the reader gets it.",
                f"Not found under the working folder after following this step (from `{folders.relative(folders.cwd)}`).",
                f"path:{Path(path).name}",
            )
        )
    return findings


def _one_per_cause(findings: list[Finding], history: History) -> list[Finding]:
    """One gap per root cause (the most severe sighting), never again on a later step; at most one info gap of
    each kind per step. Most severe first."""
    best: dict[str, Finding] = {}
    for finding in findings:
        if finding.key in history.reported_keys:
            continue
        current = best.get(finding.key)
        if current is None or GAP_SEVERITY.rank(finding.severity) > GAP_SEVERITY.rank(current.severity):
            best[finding.key] = finding
    kept, info_kinds = [], set()
    for finding in sorted(best.values(), key=lambda f: -GAP_SEVERITY.rank(f.severity)):
        if finding.severity == "info":
            if finding.gap_type in info_kinds:
                continue
            info_kinds.add(finding.gap_type)
        kept.append(finding)
    return kept
