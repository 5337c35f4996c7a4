"""The MCP step server: hands an auditor a walkthrough one step at a time and records the gaps it reports.

Order is enforced: steps come only through next_step, one at a time, and a gap belongs to the step last
served. Every change rewrites `<stem>_session.json` atomically; a server restarted on the same session file
resumes where it stopped.

    python -m stackbench.auditing.step_server [--output DIR] [--allowed-root DIR ...]

Walkthrough paths must lie inside an allowed root: the working directory, the output folder, and each
--allowed-root.
"""

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from stackbench.formats.walkthrough import (
    GAP_SEVERITY,
    GAP_TYPES,
    Gap,
    Session,
    WalkthroughExport,
    session_path_for,
    walkthrough_id_for,
)
from stackbench.lib.clock import utcnow
from stackbench.lib.jsonfiles import FormatError, load_json_file, load_model, parse_model, write_model

SERVER_NAME = "walkthrough"
MAX_DESCRIPTION_CHARS = 10_000
MAX_CONTEXT_CHARS = 20_000
MAX_WALKTHROUGH_BYTES = 10 * 1024 * 1024


class StepServerError(Exception):
    """A bad call; the message says what is wrong and is sent to the client as a tool error."""


@dataclass
class ServerConfig:
    output_dir: Path | None = None
    allowed_roots: list[Path] = field(default_factory=list)
    working_dir: Path | None = None  # an allowed root too; default: the process's (a server run in another
    # process's event loop names its own)

    def roots(self) -> list[Path]:
        roots = [self.working_dir or Path.cwd()] + ([self.output_dir] if self.output_dir else []) + self.allowed_roots
        return [Path(os.path.realpath(root)) for root in roots]

    @classmethod
    def from_args(cls, argv: list[str] | None = None) -> "ServerConfig":
        parser = argparse.ArgumentParser(
            prog="python -m stackbench.auditing.step_server", description=__doc__.split("\n")[0]
        )
        parser.add_argument("--output", help="folder for session files (default: beside the walkthrough)")
        parser.add_argument(
            "--allowed-root",
            action="append",
            default=[],
            help="another folder walkthroughs may be read from (repeatable)",
        )
        args = parser.parse_args(argv)
        return cls(
            output_dir=Path(args.output).resolve() if args.output else None,
            allowed_roots=[Path(p) for p in args.allowed_root],
        )


def _cut_tail(text: str | None, limit: int) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return f"[... {len(text) - limit} characters cut ...]\n" + text[-limit:]


class StepSession:
    """The step server's state machine, free of MCP so tests and tools share it."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.export: WalkthroughExport | None = None
        self.walkthrough_path: Path | None = None
        self.session: Session | None = None

    # -- tools -----------------------------------------------------------------------------------------
    def start(self, walkthrough_path: str, resume: bool = True) -> dict[str, Any]:
        path = self._checked_path(walkthrough_path)
        try:
            raw = load_json_file(path, max_bytes=MAX_WALKTHROUGH_BYTES)
            export = parse_model(WalkthroughExport, raw, path.name)
        except FormatError as exc:
            raise StepServerError(f"the walkthrough could not be read: {exc}") from None
        self.export, self.walkthrough_path = export, path
        session_file = self.session_file
        session_file.parent.mkdir(parents=True, exist_ok=True)
        previous = self._previous_session(export) if resume else None
        now = utcnow()
        session = self.session = previous or Session(
            walkthrough_id=walkthrough_id_for(path),
            walkthrough_path=str(path),
            current_step=0,
            total_steps=len(export.steps),
            completed_steps=0,
            session_started=now,
            last_updated=now,
        )
        self._save(session)
        info = export.walkthrough
        result = {
            "status": "resumed" if previous else "started",
            "walkthrough_id": session.walkthrough_id,
            "title": info.title,
            "description": info.description,
            "total_steps": len(export.steps),
            "estimated_duration_minutes": info.estimatedDurationMinutes,
        }
        if previous:
            result.update(current_step=previous.current_step, gaps_reported=len(previous.gaps))
        return result

    def next_step(self) -> dict[str, Any]:
        session, export = self._require_started("next_step")
        steps = export.ordered_steps()
        if session.current_step >= len(steps):
            if not session.is_complete:
                session.is_complete = True
                self._save(session)
            return {
                "status": "complete",
                "message": f"All {len(steps)} steps completed. Call walkthrough_status for the summary.",
                "total_steps": len(steps),
                "gaps_reported": len(session.gaps),
            }
        session.current_step += 1
        session.completed_steps = session.current_step
        self._save(session)
        step = steps[session.current_step - 1]
        fields = step.contentFields
        return {
            "step_number": session.current_step,
            "total_steps": len(steps),
            "title": step.title,
            "contentForUser": fields.contentForUser,
            "contextForAgent": fields.contextForAgent,
            "operationsForAgent": fields.operationsForAgent,
            "introductionForAgent": fields.introductionForAgent,
            "displayOrder": step.displayOrder,
            "nextStepReference": step.nextStepReference,
        }

    def report_gap(
        self,
        gap_type: str,
        severity: str,
        description: str,
        suggested_fix: str | None = None,
        context: str | None = None,
    ) -> dict[str, Any]:
        session, export = self._require_started("report_gap")
        if session.current_step == 0:
            raise StepServerError(
                "report_gap attaches a gap to the step last served, and no step has been "
                "served yet: call next_step first"
            )
        if gap_type not in GAP_TYPES:
            raise StepServerError(f"unknown gap_type {gap_type!r}; use one of: {', '.join(GAP_TYPES)}")
        if severity not in GAP_SEVERITY:
            raise StepServerError(f"unknown severity {severity!r}; use one of: {', '.join(GAP_SEVERITY)}")
        if not description or not description.strip():
            raise StepServerError("description is empty: say what a reader of this step runs into")
        if len(description) > MAX_DESCRIPTION_CHARS:
            raise StepServerError(
                f"description has {len(description)} characters; keep it under "
                f"{MAX_DESCRIPTION_CHARS} and put evidence in context"
            )
        step = export.ordered_steps()[session.current_step - 1]
        gap = Gap(
            step_number=session.current_step,
            step_title=step.title,
            gap_type=gap_type,
            severity=severity,
            description=description.strip(),
            suggested_fix=_cut_tail(suggested_fix, MAX_DESCRIPTION_CHARS),
            context=_cut_tail(context, MAX_CONTEXT_CHARS),
            timestamp=utcnow(),
        )
        session.gaps.append(gap)
        self._save(session)
        return {
            "status": "gap_reported",
            "step_number": gap.step_number,
            "step_title": gap.step_title,
            "gap_type": gap_type,
            "severity": severity,
            "total_gaps_reported": len(session.gaps),
        }

    def status(self) -> dict[str, Any]:
        session, export = self._require_started("walkthrough_status")
        total = session.total_steps
        by_severity = {severity: sum(1 for g in session.gaps if g.severity == severity) for severity in GAP_SEVERITY}
        return {
            "walkthrough_id": session.walkthrough_id,
            "title": export.walkthrough.title,
            "current_step": session.current_step,
            "total_steps": total,
            "progress_percentage": round(100 * session.current_step / total, 1) if total else 100.0,
            "is_complete": session.is_complete,
            "gaps_reported": len(session.gaps),
            "gaps_by_severity": by_severity,
        }

    # -- internals -------------------------------------------------------------------------------------
    @property
    def session_file(self) -> Path:
        assert self.walkthrough_path is not None, "start() names the walkthrough before its session file is used"
        return session_path_for(self.walkthrough_path, self.config.output_dir)

    def _checked_path(self, walkthrough_path: str) -> Path:
        if not isinstance(walkthrough_path, str) or not walkthrough_path.strip():
            raise StepServerError("walkthrough_path is empty: give the path of a walkthrough JSON file")
        path = Path(os.path.realpath(Path(walkthrough_path).expanduser()))
        roots = self.config.roots()
        if not any(path.is_relative_to(root) for root in roots):
            raise StepServerError(
                f"{walkthrough_path} lies outside the allowed folders ({', '.join(str(r) for r in roots)}); "
                "add its folder with --allowed-root or STACKBENCH_ALLOWED_ROOTS"
            )
        if not path.exists():
            raise StepServerError(f"{walkthrough_path} does not exist")
        if not path.is_file():
            raise StepServerError(f"{walkthrough_path} is not a file")
        return path

    def _previous_session(self, export: WalkthroughExport) -> Session | None:
        """An unfinished session of this same walkthrough, to resume after a restart."""
        if not self.session_file.exists():
            return None
        try:
            previous = load_model(Session, self.session_file)
        except FormatError:
            return None
        same = previous.walkthrough_path == str(self.walkthrough_path) and previous.total_steps == len(export.steps)
        return previous if same and not previous.is_complete else None

    def _require_started(self, tool: str) -> tuple[Session, WalkthroughExport]:
        if self.session is None or self.export is None:
            raise StepServerError(f"{tool} needs a walkthrough: call start_walkthrough(walkthrough_path) first")
        return self.session, self.export

    def _save(self, session: Session) -> None:
        session.last_updated = utcnow()
        write_model(self.session_file, session)


def build_server(config: ServerConfig) -> MCPServer:
    state = StepSession(config)
    server = MCPServer(
        SERVER_NAME,
        log_level="WARNING",
        instructions="Call start_walkthrough, then next_step repeatedly; follow each step and report_gap for "
        "anything a reader would trip over. Steps come one at a time, in order.",
    )

    def call(method: Callable[..., dict[str, Any]], *args: object) -> dict[str, Any]:
        try:
            return method(*args)
        except StepServerError as exc:
            raise ToolError(str(exc)) from None
        except OSError as exc:
            raise ToolError(f"cannot save the session file: {exc.strerror or exc}") from None

    @server.tool()
    def start_walkthrough(
        walkthrough_path: Annotated[str, Field(description="Path of the walkthrough JSON file")],
        resume: Annotated[bool, Field(description="Resume an unfinished session of this walkthrough")] = True,
    ) -> dict[str, Any]:
        """Load a walkthrough and start (or resume) its session. Returns its title and number of steps."""
        return call(state.start, walkthrough_path, resume)

    @server.tool()
    def next_step() -> dict[str, Any]:
        """The next step (contentForUser, contextForAgent, operationsForAgent, introductionForAgent), or
        status "complete" after the last one."""
        return call(state.next_step)

    @server.tool()
    def report_gap(
        gap_type: Annotated[str, Field(description="One of: " + ", ".join(GAP_TYPES))],
        severity: Annotated[
            str,
            Field(
                description="One of: critical (blocks progress), warning (confuses or "
                "costs extra work), info (minor improvement)"
            ),
        ],
        description: Annotated[str, Field(description="What a reader of this step runs into")],
        suggested_fix: Annotated[str | None, Field(description="How the docs should change")] = None,
        context: Annotated[str | None, Field(description="Evidence: the command run and its output")] = None,
    ) -> dict[str, Any]:
        """Report a gap in the step last served by next_step."""
        return call(state.report_gap, gap_type, severity, description, suggested_fix, context)

    @server.tool()
    def walkthrough_status() -> dict[str, Any]:
        """Progress of the session: current step, completion and the gaps reported by severity."""
        return call(state.status)

    return server


def main(argv: list[str] | None = None) -> None:
    config = ServerConfig.from_args(argv)
    build_server(config).run()


if __name__ == "__main__":
    main()
