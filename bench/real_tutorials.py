"""Walkthrough audits measured on real tutorials: pages shipped in PyPI sdists and npm tarballs, turned into
walkthroughs by the rule-based generator, audited by the rule-based auditor in the sandbox, and compared with
hand-made labels (bench/real_tutorials/labels.json: the problems found by following each tutorial by hand, in
our own words, per step and gap type).

    .venv/bin/python bench/real_tutorials.py [--tutorial NAME] [--show-gaps]

It downloads what it needs at run time (`pip download --no-deps --no-binary :all:`, `npm pack`) into
var/bench/tutorials and prints, per tutorial: steps reached, gaps by severity, critical+warning gaps that match a
label (true) or not (false), labelled problems found (at any severity), seconds, and the auditor's own time (the
audit's seconds minus the time the tutorial's commands took); then the totals against the targets."""

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")

from stackbench.auditing.common import AuditRequest  # noqa: E402
from stackbench.auditing.run import run_audit  # noqa: E402
from stackbench.generation.rules import generate_walkthrough  # noqa: E402
from stackbench_site.configuration import sandbox_settings  # noqa: E402

LABELS = BASE_DIR / "bench" / "real_tutorials" / "labels.json"
DOWNLOADS = BASE_DIR / "var" / "bench" / "tutorials"
TARGETS = {"precision": 0.90, "recall": 0.70, "overhead_base": 1.0, "overhead_per_step": 0.020}


def unpacked(tutorial: dict) -> Path:
    """The release's files, downloaded and unpacked once."""
    name, version = tutorial["package"], tutorial["version"]
    folder = DOWNLOADS / f"{tutorial['registry']}-{name}-{version}"
    if folder.is_dir():
        return folder
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as download:
        if tutorial["registry"] == "pypi":
            command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
            subprocess.run([*command, f"{name}=={version}", "-d", download], check=True, timeout=600)
        else:
            subprocess.run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=download, check=True, timeout=600)
        archive = next(Path(download).glob("*.tgz"), None) or next(Path(download).glob("*.tar.gz"))
        staging = Path(download) / "unpacked"
        with tarfile.open(archive) as tar:
            tar.extractall(staging, filter="data")
        (top,) = staging.iterdir()  # sdists unpack into name-version/, npm tarballs into package/
        top.rename(folder)
    return folder


def audit(tutorial: dict, workspace: Path) -> tuple[dict, float]:
    root = unpacked(tutorial)
    page = root / tutorial["page"]
    docs_root = root / tutorial["docs_root"] if tutorial.get("docs_root") else page.parent
    walkthrough_id, export = generate_walkthrough(
        page, tutorial["package"], tutorial["version"], original_path=tutorial["page"], docs_root=docs_root
    )
    path = workspace / f"{walkthrough_id}.json"
    path.write_text(json.dumps(export))
    request = AuditRequest(
        path, workspace / "out", tutorial["package"], tutorial["version"], sandbox=sandbox_settings(timeout=600)
    )
    started = time.monotonic()
    result = run_audit(request)
    return result, time.monotonic() - started


def matches(gap, label: dict) -> bool:
    return gap.step_number == label["step"] and gap.gap_type in label["gap_types"]


def measure(tutorial: dict, labels: list[dict], show_gaps: bool) -> dict:
    with tempfile.TemporaryDirectory() as workspace:
        result, seconds = audit(tutorial, Path(workspace))
    log = json.loads(result.execution_log)
    commands = sum(action.get("duration_seconds") or 0 for step in log for action in step["actions"])
    serious = [gap for gap in result.gaps if gap.severity in ("critical", "warning")]
    true = [gap for gap in serious if any(matches(gap, label) for label in labels)]
    found = [label for label in labels if any(matches(gap, label) for gap in result.gaps)]
    if show_gaps:
        for gap in result.gaps:
            verdict = "true" if gap in true else "false" if gap in serious else "info"
            print(f"    step {gap.step_number} {gap.severity:8} {gap.gap_type:15} [{verdict}] {gap.description[:150]}")
        for label in labels:
            if label not in found:
                print(f"    missed: step {label['step']} {'/'.join(label['gap_types'])}: {label['reason']}")
    return {
        "steps": f"{result.completed_steps}/{result.total_steps}",
        "reached_end": result.completed_steps == result.total_steps,
        "severities": {s: sum(1 for g in result.gaps if g.severity == s) for s in ("critical", "warning", "info")},
        "true": len(true),
        "false": len(serious) - len(true),
        "labelled": len(labels),
        "found": len(found),
        "seconds": seconds,
        "overhead": seconds - commands,
        "step_count": result.total_steps,
    }


def ratio(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "n/a"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tutorial", help="measure only this tutorial (its name in labels.json)")
    parser.add_argument("--show-gaps", action="store_true", help="print every gap with its verdict, and misses")
    args = parser.parse_args()
    corpus = json.loads(LABELS.read_text())
    totals = {"true": 0, "false": 0, "labelled": 0, "found": 0, "seconds": 0.0, "ended": 0, "count": 0}
    worst_overhead = 0.0
    header = f"{'tutorial':32} {'steps':>6} {'crit':>4} {'warn':>4} {'info':>4} {'true':>4} {'false':>5} "
    print(header + f"{'found':>7} {'seconds':>8} {'auditor s':>9}")
    for tutorial in corpus["tutorials"]:
        if args.tutorial and tutorial["name"] != args.tutorial:
            continue
        labels = [label for label in corpus["problems"] if label["tutorial"] == tutorial["name"]]
        figures = measure(tutorial, labels, args.show_gaps)
        s = figures["severities"]
        print(
            f"{tutorial['name']:32} {figures['steps']:>6} {s['critical']:>4} {s['warning']:>4} {s['info']:>4} "
            f"{figures['true']:>4} {figures['false']:>5} {figures['found']:>3}/{figures['labelled']:<3} "
            f"{figures['seconds']:>8.1f} {figures['overhead']:>9.2f}"
        )
        for key in ("true", "false", "labelled", "found", "seconds"):
            totals[key] += figures[key]
        totals["ended"] += figures["reached_end"]
        totals["count"] += 1
        budget = TARGETS["overhead_base"] + TARGETS["overhead_per_step"] * figures["step_count"]
        worst_overhead = max(worst_overhead, figures["overhead"] / budget)
    serious = totals["true"] + totals["false"]
    print()
    print(f"critical+warning gaps true: {totals['true']}/{serious} = {ratio(totals['true'], serious)} (target ≥ 90%)")
    print(
        f"labelled problems found:    {totals['found']}/{totals['labelled']} = "
        f"{ratio(totals['found'], totals['labelled'])} (target ≥ 70%)"
    )
    print(f"followed to the last step:  {totals['ended']}/{totals['count']} tutorials (target: all)")
    print(
        f"auditor's own time:         worst {worst_overhead:.0%} of its budget (1 s + 20 ms per step, beyond the "
        f"tutorial's commands); {totals['seconds']:.1f} s in all"
    )


if __name__ == "__main__":
    main()
