"""The agent-based walkthrough generator, offered when a Claude credential is configured: a Claude agent reads
the tutorial page and writes the walkthrough export, which is then validated like any imported file. Built like
the Claude auditor (same settings, environment, hooks and error handling)."""

import asyncio
import hashlib
import shutil
import tempfile
from pathlib import Path

from stackbench.agent.runner import (
    AgentLog,
    AgentObserver,
    AgentWatch,
    ClaudeSettings,
    agent_options,
    converse,
)
from stackbench.formats.walkthrough import WalkthroughExport
from stackbench.lib.jsonfiles import FormatError, load_json_file, parse_model

SYSTEM_PROMPT = """You turn a software tutorial (a markdown page) into a walkthrough export: JSON with
{"version": "1.0", "walkthrough": {"title", "description", "type": "tutorial", "status": "generated",
"estimatedDurationMinutes", "tags"}, "steps": [{"title", "displayOrder" (from 0), "nextStepReference" (the next
displayOrder, null on the last), "contentFields": {"version": "v1", "contentForUser" (the step's markdown, verbatim),
"contextForAgent", "operationsForAgent" (a numbered list: "1. Run: <command>", "2. Create <file> with the code shown",
"3. Success indicators: ..."), "introductionForAgent"}}], "metadata": {"originalDocPath"}}. One step per
second-level section. Copy the page's text; never invent commands it does not contain. Write the JSON with the
Write tool to the output file you are given, then reply "Done"."""


class GenerationError(Exception):
    """The agent could not produce a valid walkthrough; the message says why."""


async def _generate(
    doc_path: Path, output: Path, library: str, version: str, settings: ClaudeSettings, log: AgentLog
) -> None:
    with tempfile.TemporaryDirectory(prefix="stackbench_generate_") as scratch:
        root = Path(scratch)
        work = root / "work"
        work.mkdir()
        shutil.copy(doc_path, work / doc_path.name)
        (root / "home").mkdir()
        watch = AgentWatch(log, AgentObserver(), confine_to=[work])
        options = agent_options(
            settings, root / "home", watch, system_prompt=SYSTEM_PROMPT, allowed_tools=["Read", "Write"], cwd=str(work)
        )
        prompt = (
            f"Tutorial file: {work / doc_path.name}\nOutput file: {work / 'walkthrough.json'}\n"
            f"Library: {library} {version}".strip()
        )
        problem = await converse(options, prompt, settings, watch, AgentObserver(), log)
        if problem:
            raise GenerationError(problem)
        produced = work / "walkthrough.json"
        if not produced.exists():
            raise GenerationError("the agent finished without writing the walkthrough file")
        shutil.copy(produced, output)


def generate_with_claude(
    doc_path: Path,
    library: str,
    settings: ClaudeSettings,
    version: str = "",
    original_path: str | None = None,
    logs: Path | None = None,
) -> tuple[str, dict]:
    """(walkthrough id, export) written by the agent and validated; the id follows the rule-based generator's."""
    reason = settings.unavailable_reason()
    if reason:
        raise GenerationError(reason)
    doc_path = Path(doc_path).resolve()
    with tempfile.TemporaryDirectory() as scratch:
        log = AgentLog(Path(logs or scratch) / "agent_logs")
        try:
            asyncio.run(_generate(doc_path, Path(scratch) / "walkthrough.json", library, version, settings, log))
        finally:
            log.close()
        try:
            data = load_json_file(Path(scratch) / "walkthrough.json")
            parse_model(WalkthroughExport, data, "the agent's walkthrough")
        except FormatError as exc:
            raise GenerationError(f"the agent wrote an invalid walkthrough: {exc}") from None
    data["metadata"] = {
        **(data.get("metadata") or {}),
        "originalDocPath": original_path or str(doc_path),
        "generatedBy": "stackbench-claude",
        "library": library,
        "libraryVersion": version,
    }
    digest = hashlib.sha256(doc_path.read_bytes()).hexdigest()
    return f"wt_{digest[:8]}", data
