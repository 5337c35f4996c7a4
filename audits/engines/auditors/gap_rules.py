"""The rule-based auditor's rules: from what a step says (StepPlan) and what happened when it was followed
(the outcome of each action), the gaps a newcomer would hit, each with its evidence.

Severities follow the audit spec: critical blocks progress, warning confuses or costs extra work, info is a
minor improvement."""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from audits.engines.auditors.shell import CommandResult
from audits.engines.auditors.step_reading import (
    BASELINE_TOOLS,
    ENV_ASSIGNED,
    TOOL_NAMES,
    Action,
    StepPlan,
    command_words,
    defines_only,
    env_vars_used,
    is_setup_only,
    shell_definitions,
)
from stackbench_site.lib.markdown import without_fenced_blocks
from walkthroughs.engines.formats import GAP_SEVERITY

SKIPPED_FOLDERS = {"node_modules", ".venv", "venv", ".git", "__pycache__", "site-packages", ".tox", "dist", "build"}
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

    @property
    def failed(self) -> bool:
        return self.result is not None and not self.result.ok


@dataclass
class History:
    """What the reader has been shown and has done so far."""

    seen_text: str = ""
    exported_env: set[str] = field(default_factory=set)
    installed: set[str] = field(default_factory=set)
    reported_tools: set[str] = field(default_factory=set)
    shell_definitions: set[str] = field(default_factory=set)

    def remember(self, step: dict, plan: StepPlan, outcomes: list[Outcome]):
        self.seen_text += "\n" + (step.get("title") or "") + "\n" + plan.reader_text
        for outcome in outcomes:
            text = outcome.action.text
            if outcome.action.kind in ("command", "background"):
                self.exported_env |= set(ENV_ASSIGNED.findall(text))
                self.shell_definitions |= shell_definitions(text)
                for match in INSTALL_COMMAND.finditer(text):
                    self.installed |= {
                        word.split("==")[0].split("[")[0].lower()
                        for word in match.group(1).split()
                        if not word.startswith("-")
                    }


def _short(command: str, limit: int = 80) -> str:
    first = command.strip().splitlines()[0] if command.strip() else ""
    return first if len(first) <= limit else first[: limit - 1] + "…"


def _last_error_line(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception|Exit)\b.*:|^error\b|^fatal\b|^E\s", line, re.IGNORECASE):
            return line[:300]
    return lines[-1][:300] if lines else ""


def _find_by_name(root: Path, name: str, limit: int = 20000) -> Path | None:
    seen = 0
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in SKIPPED_FOLDERS]
        seen += len(files)
        if name in files or name in subfolders:
            return Path(folder) / name
        if seen > limit:
            return None
    return None


def classify_failure(outcome: Outcome, history: History, work_dir: Path, cwd: Path) -> Finding:
    """Why an action failed, as the reader would experience it."""
    action, result = outcome.action, outcome.result
    output = result.output
    what = "the code" if action.kind == "python" else f"`{_short(action.text)}`"
    evidence = result.evidence()
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
        found = _find_by_name(work_dir, name) if name else None
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
        where = os.path.relpath(found.parent, work_dir)
        return Finding(
            "logical_flow",
            "warning",
            f"`{path}` exists in `{where}`, but this step runs from `{os.path.relpath(cwd, work_dir)}`.",
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
        f"fail:{action.text[:120]}",
    )


def _mentions(text: str, tool: str) -> bool:
    names = TOOL_NAMES.get(tool, (tool,))
    return any(re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text, re.IGNORECASE) for name in names)


def _output_matches(expected: str, actual: str) -> bool:
    mask = re.compile(r"\d+(\.\d+)?|0x[0-9a-f]+|[0-9a-f]{8,}", re.IGNORECASE)
    wanted = [mask.sub("#", line.strip()) for line in expected.splitlines() if line.strip()]
    actual_masked = mask.sub("#", actual)
    if not wanted:
        return True
    hits = sum(1 for line in wanted if line in actual_masked)
    return hits * 2 >= len(wanted)


def assess_step(
    step: dict, plan: StepPlan, outcomes: list[Outcome], history: History, work_dir: Path, cwd: Path
) -> list[Finding]:
    findings: list[Finding] = []
    failures = [o for o in outcomes if o.failed]
    for outcome in failures:
        findings.append(classify_failure(outcome, history, work_dir, cwd))
    ran = [o for o in outcomes if o.result is not None and o.result.ok]
    seen_now = history.seen_text + "\n" + plan.reader_text

    if not failures:
        findings += _documented_output(plan, ran)
        effective = [
            o
            for o in ran
            if o.action.kind == "background"
            or (o.action.kind == "python" and not defines_only(o.action.text))
            or (o.action.kind == "command" and not is_setup_only(o.action.text))
        ]
        if effective and not plan.has_verification:
            findings.append(
                Finding(
                    "completeness",
                    "info",
                    "Nothing tells the reader how to check that this step worked.",
                    "Show the expected output, or add a check (a command and what it prints).",
                    "\n\n".join(o.result.evidence(max_lines=8) for o in effective[:3]),
                    "verify",
                )
            )

    for outcome in ran:
        if outcome.action.kind not in ("command", "background"):
            continue
        defined = history.shell_definitions | shell_definitions(outcome.action.text)
        for tool in command_words(outcome.action.text):
            if (
                tool in BASELINE_TOOLS
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
                    "warning",
                    f"The step runs `{tool}`, which the tutorial never mentions installing.",
                    f"List `{tool}` (and the version needed) in the prerequisites.",
                    outcome.result.evidence(max_lines=5),
                    f"tool:{tool}",
                )
            )

    for outcome in outcomes:
        for name in sorted(env_vars_used(outcome.action)):
            if name in history.exported_env or re.search(
                r"\b" + re.escape(name) + r"\b", without_fenced_blocks(seen_now)
            ):
                continue
            findings.append(
                Finding(
                    "prerequisite",
                    "warning",
                    f"`{name}` must be set in the environment, but no step says so.",
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
    findings += _missing_paths(plan, outcomes, work_dir, cwd)
    return _deduplicate(findings)


def _documented_output(plan: StepPlan, ran: list[Outcome]) -> list[Finding]:
    findings = []
    everything = "\n".join(o.result.output for o in ran)
    for expected in plan.expected_outputs:
        if ran and expected not in everything and not _output_matches(expected, everything):
            findings.append(
                Finding(
                    "execution_error",
                    "warning",
                    f"The step says the reader will see `{expected}`, but following it printed something else.",
                    "Update the expected output in the docs (or the code that prints it).",
                    "\n\n".join(o.result.evidence(max_lines=10) for o in ran[-2:]),
                    f"output:{expected}",
                )
            )
    for outcome in ran:
        expected = outcome.action.expected_output
        if expected and not _output_matches(expected, outcome.result.output):
            findings.append(
                Finding(
                    "execution_error",
                    "warning",
                    f"The output shown after `{_short(outcome.action.text)}` differs from what it prints.",
                    "Update the output block to what the command prints now.",
                    f"Documented:\n{expected[:1500]}\n\nActual:\n{outcome.result.evidence(max_lines=20)}",
                    f"output:{outcome.action.text[:80]}",
                )
            )
    return findings


def _clarity(plan: StepPlan, outcomes: list[Outcome]) -> list[Finding]:
    findings = []
    vague = [p for p in plan.vague_phrases if not any(p != other and p in other for other in plan.vague_phrases)]
    if not plan.has_concrete_work and not plan.unwritable_files and not plan.unplaced_blocks and plan.has_instruction:
        evidence = (
            f"Vague wording: {', '.join(repr(p) for p in vague)}" if vague else "No command, code or file in the step."
        )
        findings.append(
            Finding(
                "clarity",
                "warning",
                "The step asks the reader to act but gives no concrete instruction they could follow: "
                "no command, no code, no file to create.",
                "Say exactly what to do: the command to run, the code or setting to change and its value.",
                evidence + f"\n\nStep text:\n{plan.reader_text.strip()[:1000]}",
                "no-instruction",
            )
        )
    elif vague:
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
    for command in plan.unshown_operations:
        findings.append(
            Finding(
                "clarity",
                "warning",
                f"Following this step needs `{_short(command)}`, which the reader is never shown.",
                "Show the command in the step's text.",
                f"Only in the step's operations: {command}",
                f"unshown:{command}",
            )
        )
    for path in plan.unwritable_files:
        findings.append(
            Finding(
                "clarity",
                "warning",
                f"The step says to create `{path}` but never shows what goes in it.",
                f"Show the full content of `{path}`.",
                f"Operations mention {path}; no code block is given for it.",
                f"unshown-file:{path}",
            )
        )
    for block in plan.unplaced_blocks:
        findings.append(
            Finding(
                "clarity",
                "warning",
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
                    f"`{placeholder}` is a placeholder the step never explains.",
                    f"Say what to put in place of `{placeholder}` and where to find it.",
                    next((o.action.text for o in outcomes if placeholder in o.action.text), placeholder),
                    f"placeholder:{placeholder}",
                )
            )
    return findings


def _missing_paths(plan: StepPlan, outcomes: list[Outcome], work_dir: Path, cwd: Path) -> list[Finding]:
    findings = []
    for path in dict.fromkeys(plan.backticked_paths):
        if path.startswith(("/", "~", "..")) or (cwd / path).exists() or (work_dir / path).exists():
            continue
        if _find_by_name(work_dir, Path(path).name) is not None:
            continue
        if any(path in (o.action.path or "") for o in outcomes):
            continue
        findings.append(
            Finding(
                "logical_flow",
                "warning",
                f"The step refers to `{path}`, but no step so far created it.",
                f"Create `{path}` in an earlier step, or say where the reader gets it.",
                f"Not found under the working folder after following this step (from `{os.path.relpath(cwd, work_dir)}`).",
                f"path:{Path(path).name}",
            )
        )
    return findings


def _deduplicate(findings: list[Finding]) -> list[Finding]:
    """One gap per root cause (the most severe sighting), most severe first."""
    best: dict[str, Finding] = {}
    for finding in findings:
        current = best.get(finding.key)
        if current is None or GAP_SEVERITY.rank(finding.severity) > GAP_SEVERITY.rank(current.severity):
            best[finding.key] = finding
    return sorted(best.values(), key=lambda f: -GAP_SEVERITY.rank(f.severity))
