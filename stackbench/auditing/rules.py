"""The rule-based auditor: an MCP client of the step server that follows each step in one sandboxed terminal
and reports what a newcomer would trip over. No network, no model. It never reads the walkthrough file:
it sees only what next_step serves."""

import asyncio
import posixpath
import re
import shlex
from typing import Any

from stackbench.agent.runner import AgentLog
from stackbench.auditing.common import (
    AuditError,
    AuditObserver,
    AuditRequest,
    SessionFollower,
    StepClient,
    write_audit_result,
)
from stackbench.auditing.file_edits import apply_edit
from stackbench.auditing.gap_rules import (
    INTERACTIVE,
    VERSION_UNAVAILABLE,
    Finding,
    Folders,
    History,
    Outcome,
    assess_step,
    raised_as_shown,
)
from stackbench.auditing.step_reading import Action, StepPlan, read_step, tree_paths
from stackbench.auditing.terminal import CommandResult, Terminal
from stackbench.docs.shell_words import ENVIRONMENT_SHELL, INSTALL_FOR_TOOL, command_words
from stackbench.formats.results import AuditResult
from stackbench.lib.clock import utcnow
from stackbench.lib.output_compare import missing_lines
from stackbench.sandbox.prerequisites import SandboxUnavailable
from stackbench.sandbox.sandbox import Sandbox, open_sandbox

EDITED_FILE_LIMIT = 4 * 1024**2  # a file a step edits is read whole: a reader's config or source file


class AuditCancelled(AuditError):
    pass


async def audit_with_rules(request: AuditRequest, observer: AuditObserver) -> AuditResult:
    started = utcnow()
    log = AgentLog(request.logs_dir)
    follower = SessionFollower(request.session_path, observer)
    # The sandbox starts while the step server does (each takes a moment; together they take the longer one).
    making = asyncio.create_task(
        asyncio.to_thread(open_sandbox, request.sandbox, request.walkthrough_id, request.working_dir)
    )
    sandbox = terminal = None
    execution_log, title, total, cancelled = [], request.walkthrough_id, 0, False
    try:
        async with StepClient(request, log, follower) as client:
            try:
                sandbox = await making
            except SandboxUnavailable as exc:
                raise AuditError(f"no sandbox for the tutorial's commands: {exc}") from None
            observer.sandbox_ready(sandbox.describe())
            terminal = Terminal(sandbox, observer.should_stop)
            log.line(
                f"audit of {request.walkthrough_path} in {sandbox.work} ({describe(sandbox)}; sandbox ready in "
                f"{sandbox.start_seconds:.2f} s)"
            )
            info = await client.call(
                "start_walkthrough", {"walkthrough_path": str(request.walkthrough_path), "resume": False}
            )
            title, total = info["title"], info["total_steps"]
            history = History(
                seen_text=f"{info['title']}\n{info.get('description') or ''}",
                library=request.library_name,
                library_version=request.library_version,
            )
            while True:
                if observer.should_stop():
                    cancelled = True
                    break
                step = await client.call("next_step")
                if step.get("status") == "complete":
                    break
                findings, record = await asyncio.to_thread(follow_step, step, terminal, history, log, observer)
                execution_log.append(record)
                for finding in findings:
                    await client.call("report_gap", finding.arguments())
            await client.call("walkthrough_status")
    finally:
        if terminal is not None:
            terminal.close()
        # A sandbox still starting when the step server failed is closed once it has started.
        sandbox = sandbox or await _result_or_none(making)
        if sandbox is not None:
            sandbox.close()
        try:
            log.line("audit cancelled" if cancelled else "audit finished")
        finally:
            log.close()
    done = sum(1 for record in execution_log if record["status"] == "done")
    result = write_audit_result(request, started, follower.poll(), total, title, execution_log, completed=done)
    if cancelled:
        raise AuditCancelled("the audit was cancelled")
    return result


async def _result_or_none(task: asyncio.Task[Sandbox]) -> Sandbox | None:
    try:
        return await task
    except Exception:
        return None


def follow_step(
    step: dict, terminal: Terminal, history: History, log: AgentLog, observer: AuditObserver
) -> tuple[list[Finding], dict[str, Any]]:
    """Do what the step says, in order, stopping at the first failure as a reader would; then judge it."""
    number = history.current_step = step["step_number"]
    plan = read_step(step, path_for_lookup=terminal.env["PATH"])
    outcomes: list[Outcome] = []
    unexplained = {placeholder for placeholder, _ in plan.placeholders}
    for action in plan.actions:
        if action.kind == "python" and action.mode == "exec" and action.source == "content":
            earlier = history.next_version_of(action.text)
            if earlier is not None:
                # The program the reader saved, grown: they put the new version in the same file.
                action.kind, action.path, action.expected_output = "file", earlier, None
    after_placeholder = False
    for index, action in enumerate(plan.actions):
        if observer.should_stop():
            break
        skip = action.skip_reason or (
            "contains a placeholder the reader must fill in"
            if any(placeholder in action.text for placeholder in unexplained)
            else ""
        )
        if not skip and action.kind == "command" and ENVIRONMENT_SHELL.match(action.text):
            # The reader now types inside that shell; the auditor's terminal cannot follow them in, so what
            # the page shows there is not compared (claiming a difference it cannot see would be a false alarm).
            skip = "opens an interactive shell the auditor cannot type into; outputs shown after it are not compared"
            for later in plan.actions[index + 1 :]:
                later.expected_output = None
        if not skip and after_placeholder and action.kind != "python":
            skip = "follows a command the reader could not run as shown"
        after_placeholder = after_placeholder or skip.startswith("contains a placeholder")
        if skip:
            outcomes.append(Outcome(action, skipped=skip))
            log.line(f"step {number}: skipped ({skip}) {action.text[:120]!r}")
            continue
        result = _perform_logged(action, terminal, number, log, observer)
        if not result.ok and (raised_as_shown(action, result.output) or _ended_as_shown(action, result)):
            result.exit_code = 0  # the page shows this ending (a traceback, pytest's "no tests ran"): as documented
        # The reader hits a missing tool or a question, fixes the evident thing and tries again; a second fix
        # may follow the first (the tool installed, then the library it imports).
        for _ in range(MAX_FIXES):
            fallback = _fallback_for(action, result, plan, history)
            if fallback is None:
                break
            outcomes.append(Outcome(action, result, replaced_by=fallback.text))
            action, result = fallback, _perform_logged(fallback, terminal, number, log, observer)
        outcomes.append(Outcome(action, result))
        if action.kind == "file" and action.path and result.ok:
            history.file_written(action.path, action.text)
        if not result.ok and _later_actions_need(action):
            break

        if action.kind == "background" or result.became_server:
            checks = _check_server(action, plan, terminal, number, log, observer)
            outcomes += checks
            if any(check.failed for check in checks):
                break
    folders = Folders(terminal.sandbox.files, terminal.sandbox.work, terminal.cwd)
    findings = assess_step(step, plan, outcomes, history, folders)
    history.remember(step, plan, outcomes, findings)
    # A command the auditor fixed and ran again is judged by its second run; the fix is on record.
    not_done = [
        f"{_short_action(o.action)}: {o.skipped or f'failed (exit {o.run.exit_code})'}"
        for o in outcomes
        if (o.skipped or o.failed) and not o.replaced_by
    ]
    fixed = [f"{_short_action(o.action)}: fixed by `{o.replaced_by[:160]}` to go on" for o in outcomes if o.replaced_by]
    record = {
        "step_number": number,
        "title": step.get("title", ""),
        # Done: every action ran and ended as the page says; partly done: the ones listed did not.
        "status": "partly done" if not_done else "done",
        "not_done": not_done,
        "fixed": fixed,
        "actions": [
            {
                "kind": o.action.kind,
                "source": o.action.source,
                "command": o.action.path or o.action.text[:2000],
                "skipped": o.skipped or None,
                "exit_code": o.result.exit_code if o.result else None,
                "duration_seconds": round(o.result.duration, 3) if o.result else None,
                "output_tail": o.result.output[-2000:] if o.result else None,
            }
            for o in outcomes
        ],
        "skipped_alternatives": plan.skipped_alternatives,
        "illustrations": plan.illustrations,
        "environment_notes": history.environment_notes.get(number, []),
        "gaps": [f.gap_type for f in findings],
    }
    return findings, record


def _short_action(action: Action) -> str:
    if action.path:
        return f"write `{action.path}`"
    return f"`{action.text.strip().splitlines()[0][:80]}`" if action.text.strip() else "an empty action"


def _later_actions_need(action: Action) -> bool:
    """Whether the step's later actions rely on this one having worked: a folder change or an environment the
    shell enters (they would run in the wrong place), a server (the requests are for it). Other commands of a
    step stand on their own: a reader whose command fails still types the next one, and its own failure, if
    any, is judged on its own evidence."""
    words = command_words(action.text) if action.kind in ("command", "background") else []
    return action.kind == "background" or bool(words) and words[0] in ("cd", "pushd", "source", ".")


def _ended_as_shown(action: Action, result: CommandResult) -> bool:
    """A command that exits non-zero after printing what its page shows it printing did what the page says."""
    expected = action.expected_output or ""
    shown = [line for line in expected.splitlines() if line.strip()]
    if action.kind != "command" or result.exit_code in (None, 126, 127) or len(shown) < 2:
        return False
    return len(missing_lines(expected, result.output)) * 2 <= len(shown)


def _perform_logged(
    action: Action, terminal: Terminal, number: int, log: AgentLog, observer: AuditObserver
) -> CommandResult:
    observer.command_started(action.path and f"write {action.path}" or action.text.strip().splitlines()[0][:300])
    result = _perform(action, terminal, number)
    tool = {"file": "Write", "compare": "Read", "tree": "Glob", "python": "Python", "request": "WebFetch"}.get(
        action.kind, "Bash"
    )
    log.tool_call(
        tool,
        {"path": action.path} if action.kind in ("file", "compare") else {"command": action.text},
        {"exit_code": result.exit_code, "timed_out": result.timed_out, "output": result.output},
        result.duration,
        is_error=not result.ok,
    )
    return result


MAX_FIXES = 3  # evident fixes tried in a row on one command
# A command run in a terminal (script's pty) with Enter pressed at each of its questions.
ANSWERING = "yes '' 2>/dev/null | head -n 200 | script -qefc "
# When a tool is missing, the one a newcomer reaches for instead (the operations may name it too).
EQUIVALENT_TOOLS = {
    "pnpx": "npx",
    "bunx": "npx",
    "pnpm dlx": "npx",
    "yarn dlx": "npx",
    "pnpm create": "npm create",
    "yarn create": "npm create",
    "bun create": "npm create",
    "pnpm add": "npm install",
    "yarn add": "npm install",
    "bun add": "npm install",
    "pnpm install": "npm install",
    "yarn install": "npm install",
    "bun install": "npm install",
    "pnpm run": "npm run",
    "yarn run": "npm run",
    "bun run": "npm run",
    "python": "python3",
    "pip": "pip3",
}


def _fallback_for(action: Action, result: CommandResult, plan: StepPlan, history: History) -> Action | None:
    """The command the step offers for the reader who lacks the tool: the same command in the operations (or
    among the alternatives the page lists) with another tool, or the well-known equivalent, else the tool
    installed from its package index. A missing tool (or Python module) that is the library the tutorial is
    about (its page assumes it installed) is installed at the audited version."""
    if action.kind not in ("command", "background"):
        return None
    if action.kind == "command" and INTERACTIVE.search(result.output) and not action.text.startswith(ANSWERING):
        # Questions the page leaves unanswered: a reader presses Enter at each, taking the defaults, in a terminal.
        return Action("command", f"{ANSWERING}{shlex.quote(action.text)} /dev/null", "fallback")
    pinned = _audited_version_instead(action, result, history)
    if pinned is not None:
        return Action(action.kind, pinned, "fallback")
    module = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", result.output)
    if module and history.library and _normalized(module.group(1).split(".")[0]) == _normalized(history.library):
        return Action(action.kind, f"{_library_install(history)} && {action.text}", "fallback")
    if result.exit_code != 127:
        return None
    words = command_words(action.text)
    if not words:
        return None
    tool = words[0]
    if history.library and _normalized(tool) == _normalized(history.library):
        return Action(action.kind, f"{_library_install(history)} && {action.text}", "fallback")
    rest = action.text.split(tool, 1)[1]
    for other in plan.operation_commands + plan.skipped_alternatives:
        other_words = command_words(other)
        if other_words and other_words[0] != tool and rest.strip() and other.rstrip().endswith(rest.strip()):
            return Action(action.kind, other, source="operations")
    for missing, instead in sorted(EQUIVALENT_TOOLS.items(), key=lambda pair: -len(pair[0])):
        if re.match(rf"^\s*{re.escape(missing)}(?=\s|$)", action.text):
            return Action(action.kind, re.sub(rf"^\s*{re.escape(missing)}", instead, action.text, count=1), "fallback")
    if tool in INSTALL_FOR_TOOL:
        return Action(action.kind, f"{INSTALL_FOR_TOOL[tool]} && {action.text}", "fallback")
    return None


def _audited_version_instead(action: Action, result: CommandResult, history: History) -> str | None:
    """The install command again with the audited library at the audited version, when the registry has no
    version or tag the command asked for (the auditor audits one release, whatever tag the page names)."""
    if not (history.library and history.library_version and VERSION_UNAVAILABLE.search(result.output)):
        return None
    named = re.compile(rf"(?<![\w@/.-]){re.escape(history.library)}(?:@[\w.^~<>=*-]+|==[\w.*]+)?(?![\w/-])")
    if not named.search(action.text):
        return None
    npm = bool(re.search(r"\b(?:npm|npx|yarn|pnpm|bun)\b", action.text))
    pinned = f"{history.library}@{history.library_version}" if npm else f"{history.library}=={history.library_version}"
    instead = named.sub(pinned, action.text, count=1)
    return instead if instead != action.text else None


def _library_install(history: History) -> str:
    """The audited library installed the way its page installs it: from npm when the page gets it with npm,
    npx or yarn, else from PyPI; at the audited version either way."""
    name, version = history.library, history.library_version
    if history.library_from_npm():
        return f"npm install --global --silent {shlex.quote(f'{name}@{version}' if version else name)}"
    return f"python3 -m pip install --quiet {shlex.quote(f'{name}=={version}' if version else name)}"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _check_server(
    action: Action, plan: StepPlan, terminal: Terminal, number: int, log: AgentLog, observer: AuditObserver
) -> list[Outcome]:
    """A server the step starts is asked for every local URL the step mentions (or, when it mentions none,
    the one the server announces), as a reader opens them in a browser."""
    urls = list(plan.urls)
    if not urls:
        announced = terminal.wait_for_url(20.0)
        urls = [announced] if announced else []
    outcomes = []
    for url in urls:
        request = Action("request", url, source="content")
        result = _perform_logged(request, terminal, number, log, observer)
        result.output += _server_log_tail(terminal)
        outcomes.append(Outcome(request, result))
        if not result.ok:
            break
    return outcomes


def _server_log_tail(terminal: Terminal) -> str:
    lines = terminal.server_log().rstrip().splitlines()[-15:]
    return "\n\n[server log]\n" + "\n".join(lines) if lines else ""


def _perform(action: Action, terminal: Terminal, step_number: int) -> CommandResult:
    if action.kind == "file":
        return _write_file(action, terminal)
    if action.kind == "compare":
        return _compare_file(action, terminal)
    if action.kind == "tree":
        return _compare_tree(action, terminal)
    if action.kind == "background":
        terminal.stop_servers()
        return terminal.start_background(action.text)
    if action.kind == "request":
        return terminal.request(action.text)
    if action.kind == "python":
        return terminal.run_python(action.text, f"<step {step_number}>", mode=action.mode)
    return terminal.run(action.text, servers=True)


def _write_file(action: Action, terminal: Terminal) -> CommandResult:
    assert action.path is not None, "a file action names its file (step_reading)"
    target = terminal.resolve_inside(action.path)
    if target is None:
        return CommandResult(
            f"write {action.path}", 1, f"{action.path} lies outside the reader's folders; not written", 0.0
        )
    sandbox = terminal.sandbox
    text, verb = action.text, "wrote"
    try:
        old = sandbox.read_file(target, EDITED_FILE_LIMIT) if action.append or action.update else None
        if old is not None and action.append:
            verb = "appended to"
        elif old is not None and action.update:
            text, how = apply_edit(old, action.text, action.path)
            verb = {"replaced": "replaced the whole of", "merged": "merged the block into", "appended": "appended to"}[
                how
            ]
        sandbox.write_file(target, text, append=old is not None and action.append and not action.update)
    except OSError as exc:
        return CommandResult(f"write {action.path}", 1, f"cannot write {action.path}: {exc.strerror or exc}", 0.0)
    return CommandResult(
        f"write {action.path}",
        0,
        f"{verb} {posixpath.relpath(target, sandbox.work)} ({len(text.encode())} bytes)",
        0.0,
    )


def _compare_file(action: Action, terminal: Terminal) -> CommandResult:
    """The file the page shows as made, compared with the one on disk: the lines it shows (its `...` standing
    for the rest) must be there, at least half of them, as output is compared."""
    assert action.path is not None, "a compare action names its file (step_reading)"
    command = f"compare {action.path}"
    target = terminal.resolve_inside(action.path)
    try:
        text = terminal.sandbox.read_file(target, EDITED_FILE_LIMIT) if target else None
    except OSError:
        text = None
    if text is None:
        return CommandResult(command, 1, f"{action.path} does not exist (from {terminal.cwd})", 0.0)
    shown = [line for line in action.text.splitlines() if line.strip() and line.strip() not in ("...", "…")]
    missing = missing_lines(action.text, text)
    if len(missing) * 2 > len(shown):
        lines = "\n".join(f"  {line}" for line in missing[:10])
        return CommandResult(command, 1, f"{action.path} lacks what the page shows:\n{lines}", 0.0)
    return CommandResult(command, 0, f"{action.path} holds what the page shows", 0.0)


def _compare_tree(action: Action, terminal: Terminal) -> CommandResult:
    """The files a drawn tree shows, looked for from the reader's folder: more than half of them missing means
    following the page did not make what it shows."""
    paths = tree_paths(action.text)
    missing = []
    for path in paths:
        target = terminal.resolve_inside(path)
        if target is None or terminal.sandbox.files.kind(target) is None:
            missing.append(path)
    command = "compare the files shown"
    if paths and len(missing) * 2 > len(paths):
        listed = ", ".join(f"`{path}`" for path in missing[:8])
        return CommandResult(command, 1, f"{len(missing)} of the {len(paths)} paths shown are missing: {listed}", 0.0)
    return CommandResult(command, 0, f"{len(paths) - len(missing)} of the {len(paths)} paths shown are there", 0.0)


def describe(sandbox: Sandbox) -> str:
    """The reader's machine in one line, for the log."""
    facts = sandbox.describe()
    return (
        f"sandbox: {facts['confinement']}; Python {facts['python']}, Node {facts['node']}, network: "
        f"{facts['network']}; {facts['limits']}; cgroups: {facts['cgroups']}"
    )
