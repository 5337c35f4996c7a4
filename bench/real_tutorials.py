"""Walkthrough audits measured on real tutorials: pages shipped in PyPI sdists and npm tarballs, and pages of
public repositories fetched for local evaluation, turned into walkthroughs by the rule-based generator, audited by
the rule-based auditor in the sandbox, and compared with problems found by following each tutorial by hand
(bench/real_tutorials/labels.json: the tune half; check.json: the check half, run only at the end of a piece of
work and never read for rules; CORPUS.md says which is which and why).

    .venv/bin/python bench/real_tutorials.py [--half tune|check|both] [--tutorial NAME] [--show-gaps]

It downloads what it needs at run time (a release's sdist from PyPI's index, `npm pack`; a repository's
page from its local mirror at the pinned commit, skipped with a note where the mirror is absent) into
var/bench/tutorials and prints, per tutorial: steps done (every action ran as the page says) and partly done of
the total, whether the audit reached the end (its last step done, or stopped there at a labelled defect),
gaps by severity, critical+warning gaps that match a labelled
problem (true) or not (false), labelled problems found (at any severity), info gaps that match none (judged
wrong), seconds, and the auditor's own time (the audit's seconds minus the time the tutorial's commands took);
then each half's totals against the targets. A label names its step (the tune half's first labels) or the page
line where the problem shows; a gap matches it when its step holds that line and its type is one of the label's.

"""

import argparse
import json
import os
import re
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
from stackbench.generation.rules import STEP_HEADING, generate_walkthrough  # noqa: E402
from stackbench_site.configuration import sandbox_settings  # noqa: E402

sys.path.insert(0, str(BASE_DIR / "bench"))
from real_docs import docs_folder  # noqa: E402  (an sdist fetched from PyPI's index, never built)

HALVES = {
    "tune": BASE_DIR / "bench" / "real_tutorials" / "labels.json",
    "check": BASE_DIR / "bench" / "real_tutorials" / "check.json",
}
DOWNLOADS = BASE_DIR / "var" / "bench" / "tutorials"
MIRRORS = Path("/work/.mirror")  # where `fetch` brings repositories on the machines this corpus was built on
TARGETS = {"precision": 0.90, "recall": 0.70, "info_wrong": 0.25, "overhead_base": 1.0, "overhead_per_step": 0.020}
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")


class Unavailable(Exception):
    """A tutorial whose material this machine cannot bring (a repository with no local mirror)."""


def unpacked(tutorial: dict, mirrors: Path) -> Path:
    """The release's (or the pinned commit's) files, brought and unpacked once."""
    name, version = tutorial["package"], tutorial["version"]
    if tutorial["registry"] == "pypi":
        return docs_folder(name, version, ".")
    folder = DOWNLOADS / f"{tutorial['registry']}-{name}-{version}"
    if folder.is_dir():
        return folder
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as download:
        staging = Path(download) / "unpacked"
        if tutorial["registry"] == "git":
            mirror = mirrors / tutorial["repository"].replace("/", "+") / "repo"
            if not mirror.is_dir():
                raise Unavailable(f"no local mirror of {tutorial['repository']} under {mirrors}")
            staging.mkdir()
            paths = tutorial.get("paths") or [tutorial["page"].split("/")[0]]
            archive = subprocess.run(
                ["git", f"--git-dir={mirror}", "archive", tutorial["commit"], *paths],
                check=True,
                capture_output=True,
                timeout=600,
            ).stdout
            subprocess.run(["tar", "x", "-C", str(staging)], input=archive, check=True, timeout=600)
            staging.rename(folder)
            return folder
        subprocess.run(["npm", "pack", "--silent", f"{name}@{version}"], cwd=download, check=True, timeout=600)
        archive_path = next(Path(download).glob("*.tgz"))
        with tarfile.open(archive_path) as tar:
            tar.extractall(staging, filter="data")
        (top,) = staging.iterdir()  # npm tarballs unpack into package/
        top.rename(folder)
    return folder


def audit(tutorial: dict, root: Path, workspace: Path) -> tuple[dict, list[int], float]:
    """The audit's result, the page line each step starts at, and the audit's seconds."""
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
    return (
        result,
        step_starts(page.read_text(), [step["title"] for step in export["steps"]]),
        time.monotonic() - started,
    )


def step_starts(page: str, titles: list[str]) -> list[int]:
    """The page line (1-based) of each step's heading, found in order; a step whose heading is not on the page
    (the whole page as one step, a heading from an included file) starts where the one before it did."""
    lines, starts, position = page.splitlines(), [], 0
    for title in titles:
        for number in range(position, len(lines)):
            heading = HEADING.match(lines[number])
            if heading and (STEP_HEADING.sub("", heading.group(1)) or heading.group(1)) == title:
                position = number + 1
                break
        starts.append(position if starts or position else 1)
    starts[0] = 1  # the page's introduction is read with its first step
    return starts


def step_of_line(line: int, starts: list[int]) -> int:
    return max(number for number, start in enumerate(starts, start=1) if start <= line or number == 1)


def matches(gap, label: dict, starts: list[int]) -> bool:
    step = label["step"] if "step" in label else step_of_line(label["line"], starts)
    return gap.step_number == step and gap.gap_type in label["gap_types"]


def measure(tutorial: dict, labels: list[dict], show_gaps: bool, mirrors: Path) -> dict:
    root = unpacked(tutorial, mirrors)
    with tempfile.TemporaryDirectory() as workspace:
        result, starts, seconds = audit(tutorial, root, Path(workspace))
    log = json.loads(result.execution_log)
    commands = sum(action.get("duration_seconds") or 0 for step in log for action in step["actions"])
    serious = [gap for gap in result.gaps if gap.severity in ("critical", "warning")]
    true = [gap for gap in serious if any(matches(gap, label, starts) for label in labels)]
    found = [label for label in labels if any(matches(gap, label, starts) for gap in result.gaps)]
    found_gaps = [gap for gap in result.gaps if any(matches(gap, label, starts) for label in labels)]
    # The strict figure pairs gaps with problems one to one: a second gap matching a problem already paired is a
    # duplicate, counted as false (noise to the team reading the report).
    paired: list[dict] = []
    for gap in serious:
        label = next((label for label in labels if label not in paired and matches(gap, label, starts)), None)
        if label is not None:
            paired.append(label)
    infos = [gap for gap in result.gaps if gap.severity == "info"]
    wrong_infos = [gap for gap in infos if not any(matches(gap, label, starts) for label in labels)]
    # The auditor's own record of each step (a fixed command is judged by its second run).
    done = sum(1 for step in log if step["status"] == "done")
    partly = len(log) - done
    if show_gaps:
        print(f"    steps start at page lines {starts}")
        for gap in result.gaps:
            verdict = (
                "true" if gap in true else "false" if gap in serious else "info?" if gap in wrong_infos else "info"
            )
            print(f"    step {gap.step_number} {gap.severity:8} {gap.gap_type:15} [{verdict}] {gap.description[:150]}")
        for label in labels:
            if label not in found:
                where = f"step {label['step']}" if "step" in label else f"line {label['line']}"
                print(f"    missed: {where} {'/'.join(label['gap_types'])}: {label['reason']}")
    last = log[-1] if log else None
    all_reached = bool(last) and len(log) == result.total_steps
    last_done = all_reached and last["status"] == "done"
    # Stopped at a labelled defect: the last step is partly done, and a gap there matches a labelled problem.
    at_label = all_reached and not last_done and any(g.step_number == last["step_number"] for g in found_gaps)
    return {
        "done": done,
        "partly": partly,
        "total_steps": result.total_steps,
        "reached_end": last_done or at_label,
        "end": "yes" if last_done else "label" if at_label else "no",
        "severities": {s: sum(1 for g in result.gaps if g.severity == s) for s in ("critical", "warning", "info")},
        "true": len(true),
        "false": len(serious) - len(true),
        "paired": len(paired),
        "labelled": len(labels),
        "found": len(found),
        "infos": len(infos),
        "wrong_infos": len(wrong_infos),
        "seconds": seconds,
        "overhead": seconds - commands,
    }


def ratio(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "n/a"


def run_half(half: str, only: str | None, show_gaps: bool, mirrors: Path) -> None:
    corpus = json.loads(HALVES[half].read_text())
    keys = (
        "true",
        "false",
        "paired",
        "labelled",
        "found",
        "infos",
        "wrong_infos",
        "seconds",
        "done",
        "partly",
        "total_steps",
    )
    totals = dict.fromkeys(keys, 0) | {"ended": 0, "count": 0, "seconds": 0.0}
    worst_overhead, unavailable = 0.0, []
    print(f"== {half} half ({HALVES[half].name})")
    header = f"{'tutorial':34} {'done+part/all':>13} {'end':>5} {'crit':>4} {'warn':>4} {'info':>4} {'true':>4} "
    print(header + f"{'false':>5} {'found':>7} {'info wrong':>10} {'seconds':>8} {'auditor s':>9}")
    for tutorial in corpus["tutorials"]:
        if only and tutorial["name"] != only:
            continue
        labels = [label for label in corpus["problems"] if label["tutorial"] == tutorial["name"]]
        try:
            figures = measure(tutorial, labels, show_gaps, mirrors)
        except Unavailable as exc:
            unavailable.append(f"{tutorial['name']}: {exc}")
            continue
        s = figures["severities"]
        steps = f"{figures['done']}+{figures['partly']}/{figures['total_steps']}"
        print(
            f"{tutorial['name']:34} {steps:>13} {figures['end']:>5} {s['critical']:>4} "
            f"{s['warning']:>4} {s['info']:>4} {figures['true']:>4} {figures['false']:>5} "
            f"{figures['found']:>3}/{figures['labelled']:<3} {figures['wrong_infos']:>4}/{figures['infos']:<5} "
            f"{figures['seconds']:>8.1f} {figures['overhead']:>9.2f}"
        )
        for key in keys:
            totals[key] += figures[key]
        totals["ended"] += figures["reached_end"]
        totals["count"] += 1
        budget = TARGETS["overhead_base"] + TARGETS["overhead_per_step"] * figures["total_steps"]
        worst_overhead = max(worst_overhead, figures["overhead"] / budget)
    serious = totals["true"] + totals["false"]
    print(f"tutorials:                  {totals['count']}" + (f" ({len(unavailable)} not here)" if unavailable else ""))
    for line in unavailable:
        print(f"  not here: {line}")
    print(
        f"steps done:                 {totals['done']}/{totals['total_steps']} "
        f"(and {totals['partly']} partly done: an action failed or was skipped)"
    )
    print(
        f"reached the end:            {totals['ended']}/{totals['count']} tutorials, or stopped at a labelled defect "
        "(target: all)"
    )
    print(f"critical+warning gaps true: {totals['true']}/{serious} = {ratio(totals['true'], serious)} (target ≥ 90%)")
    print(
        f"  strict, one to one:       {totals['paired']}/{serious} = {ratio(totals['paired'], serious)} "
        "(a second gap for a problem already found counts as false)"
    )
    print(
        f"labelled problems found:    {totals['found']}/{totals['labelled']} = "
        f"{ratio(totals['found'], totals['labelled'])} (target ≥ 70%)"
    )
    print(
        f"info gaps matching no label: {totals['wrong_infos']}/{totals['infos']} = "
        f"{ratio(totals['wrong_infos'], totals['infos'])} (target ≤ 25%)"
    )
    print(
        f"auditor's own time:         worst {worst_overhead:.0%} of its budget (1 s + 20 ms per step, beyond the "
        f"tutorial's commands); {totals['seconds']:.1f} s in all"
    )
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=("tune", "check", "both"), default="tune")
    parser.add_argument("--tutorial", help="measure only this tutorial (its name in the half's file)")
    parser.add_argument("--show-gaps", action="store_true", help="print every gap with its verdict, and misses")
    parser.add_argument("--mirrors", type=Path, default=MIRRORS, help="where fetched repositories are mirrored")
    args = parser.parse_args()
    for half in ("tune", "check") if args.half == "both" else (args.half,):
        run_half(half, args.tutorial, args.show_gaps, args.mirrors)


if __name__ == "__main__":
    main()
