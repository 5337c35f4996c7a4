"""Audit overhead: a generated 10-step walkthrough whose commands are trivial (`echo`), audited by the
rule-based auditor end to end (its MCP step server, which it holds in-process, and the run's sandbox included).
Prints the total time, the MCP round trip per step (from the tool trace the audit writes), and the sandbox's own
cost: its start per run (its virtualenv copied ahead, as a worker running audits one after another has it), and
a process started in it.

    .venv/bin/python bench/audit_overhead.py [--steps 10] [--repeat 3]

Targets: the whole audit under 1.5 s; per-step overhead under 20 ms; a sandbox start under 150 ms."""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")

from stackbench.auditing.common import AuditRequest
from stackbench.auditing.run import run_audit
from stackbench.sandbox.sandbox import open_sandbox
from stackbench_site.configuration import sandbox_settings


def make_walkthrough(folder: Path, steps: int) -> Path:
    export = {
        "version": "1.0",
        "exportedAt": "2026-11-01T00:00:00Z",
        "walkthrough": {
            "title": "Echo",
            "description": "",
            "type": "quickstart",
            "status": "published",
            "createdAt": 0,
            "updatedAt": 0,
            "estimatedDurationMinutes": 1,
            "tags": [],
            "metadata": None,
        },
        "steps": [
            {
                "title": f"Step {i}",
                "displayOrder": i,
                "createdAt": 0,
                "updatedAt": 0,
                "metadata": None,
                "nextStepReference": i + 1 if i + 1 < steps else None,
                "contentFields": {
                    "version": "v1",
                    "contentForUser": f"```bash\necho step-{i}\n```\n\nIt prints `step-{i}`.",
                    "contextForAgent": "",
                    "operationsForAgent": f"1. Run: echo step-{i}",
                    "introductionForAgent": "",
                },
            }
            for i in range(steps)
        ],
        "metadata": None,
    }
    path = folder / "wt_bench.json"
    path.write_text(json.dumps(export))
    return path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    totals, per_step = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            folder = Path(folder)
            path = make_walkthrough(folder, args.steps)
            started = time.perf_counter()
            result = run_audit(AuditRequest(path, folder / "out", sandbox=sandbox_settings()))
            totals.append(time.perf_counter() - started)
            assert result.completed_steps == args.steps and not result.gaps, result.gaps
            trace = [
                json.loads(line)
                for line in (folder / "out" / "agent_logs" / "audit_tools.jsonl").read_text().splitlines()
            ]
            per_step += [r["duration_ms"] for r in trace if r["tool"] == "mcp__walkthrough__next_step"]
            commands = [r["duration_ms"] for r in trace if r["tool"] == "Bash"]
    print(f"walkthrough: {args.steps} steps of `echo`, {args.repeat} runs")
    print(
        f"whole audit (server start included): median {statistics.median(totals):.2f} s, "
        f"min {min(totals):.2f} s, max {max(totals):.2f} s   (target < 1.5 s)"
    )
    print(
        f"MCP next_step round trip: median {statistics.median(per_step):.2f} ms, "
        f"p95 {sorted(per_step)[int(len(per_step) * 0.95) - 1]:.2f} ms   (target < 20 ms)"
    )
    print(f"command in the persistent shell: median {statistics.median(commands):.2f} ms")
    starts, spawns = [], []
    for _ in range(args.repeat):
        sandbox = open_sandbox(sandbox_settings(), "bench")
        starts.append(sandbox.start_seconds)
        for _ in range(10):
            started = time.perf_counter()
            sandbox.run(["true"], timeout=10)
            spawns.append(time.perf_counter() - started)
        sandbox.close()
    print(
        f"sandbox start per run (namespaces, network, virtualenv): median {1000 * statistics.median(starts):.0f} ms"
        "   (target < 150 ms)"
    )
    print(
        f"a new process in the sandbox (launcher chain + bubblewrap): median {1000 * statistics.median(spawns):.1f} ms"
    )


if __name__ == "__main__":
    main()
