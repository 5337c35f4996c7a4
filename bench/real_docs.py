"""Code-example validation measured on real documentation: the docs/ Markdown shipped in PyPI sdists, validated
against that exact release and compared with hand-made labels (bench/real_docs/labels.json: one entry per
Python block a reader would run, with the verdict found by following it by hand).

    .venv/bin/python bench/real_docs.py [--warm-up] [--num-workers N] [--library NAME] [--show-failures]

It downloads what it needs at run time (`pip download --no-deps --no-binary :all:`) into var/bench/sdists and
prints, per library: blocks labelled vs extracted as runnable, doctest statements run with their output compared,
reported failures (error and warning) that are labelled doc defects (true) or not (false), precision, recall and
seconds; then the same over all libraries, with the targets. --warm-up validates once untimed first, so the
timed pass has a warm package cache (the target is for a warm cache)."""

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

from stackbench.docs.extractor import extract_docs  # noqa: E402
from stackbench.formats.walkthrough import RUNNABLE_STYLES  # noqa: E402
from stackbench.validation.batch import validate_all  # noqa: E402
from stackbench_site.configuration import validation_options  # noqa: E402

LABELS = BASE_DIR / "bench" / "real_docs" / "labels.json"
SDISTS = BASE_DIR / "var" / "bench" / "sdists"
RUNNABLE_VERDICTS = ("pass", "doc_defect", "needs_env")
TARGETS = {"extracted": 0.95, "statements": 0.90, "precision": 0.90, "recall": 0.80, "seconds": 60.0}


def docs_folder(name: str, version: str) -> Path:
    """The docs/ folder of the release's sdist, downloaded once."""
    unpacked = SDISTS / f"{name}-{version}"
    if not unpacked.is_dir():
        SDISTS.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as download:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    f"{name}=={version}",
                    "-d",
                    download,
                ],
                check=True,
                timeout=600,
            )
            archive = next(Path(download).glob("*.tar.gz"))
            with tarfile.open(archive) as tar:
                tar.extractall(SDISTS / "unpack", filter="data")
        (SDISTS / "unpack" / archive.name.removesuffix(".tar.gz")).rename(unpacked)
    return unpacked / "docs"


def measure(name: str, version: str, labels: list[dict], workers: int, output: Path) -> dict:
    docs = docs_folder(name, version)
    started = time.monotonic()
    report = extract_docs(docs, name, version, include="*.md")
    analyses = [analysis for _, analysis in report.analyses]
    summary = validate_all(analyses, output, validation_options(timeout=30, num_workers=workers))
    seconds = time.monotonic() - started
    examples = {(a.page, e.line): e for a in analyses for e in a.examples}
    results = {(d.page, r.line): r for d in summary.documents for r in d.results}
    labelled = {(label["page"], label["line"]): label for label in labels}

    runnable = [key for key, label in labelled.items() if label["verdict"] in RUNNABLE_VERDICTS]
    extracted = [
        key
        for key in runnable
        if key in examples
        and examples[key].style in RUNNABLE_STYLES
        and examples[key].execution_context != "not_executable"
    ]
    sessions = [r for r in results.values() if r.statements is not None]
    reported = {key: r for key, r in results.items() if r.status == "failure" and r.severity in ("error", "warning")}
    true = [key for key in reported if labelled.get(key, {}).get("verdict") == "doc_defect"]
    false = [key for key in reported if key not in true]
    defects = [key for key, label in labelled.items() if label["verdict"] == "doc_defect"]
    found = [key for key in defects if key in reported]
    return {
        "name": name,
        "version": version,
        "labelled": len(runnable),
        "extracted": len(extracted),
        "missed_blocks": sorted(set(runnable) - set(extracted)),
        "statements": sum(r.statements for r in sessions),
        "statements_run": sum(r.statements_run or 0 for r in sessions),
        "true": true,
        "false": [(key, reported[key].severity, (reported[key].error_message or "")[:160]) for key in false],
        "defects": len(defects),
        "found": len(found),
        "missed_defects": [(key, labelled[key]["reason"]) for key in defects if key not in reported],
        "unlabelled_failures": [key for key in reported if key not in labelled],
        "setup_problems": [p.message for d in summary.documents for p in d.setup_problems],
        "seconds": seconds,
    }


def ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def show(figures: dict, details: bool):
    precision = ratio(len(figures["true"]), len(figures["true"]) + len(figures["false"]))
    print(f"\n{figures['name']} {figures['version']}")
    print(
        f"  blocks labelled runnable {figures['labelled']:>4}   extracted runnable {figures['extracted']:>4} "
        f"({ratio(figures['extracted'], figures['labelled']):.0%})"
    )
    print(
        f"  doctest statements       {figures['statements']:>4}   run and compared   {figures['statements_run']:>4} "
        f"({ratio(figures['statements_run'], figures['statements']):.0%})"
    )
    print(
        f"  failures reported        {len(figures['true']) + len(figures['false']):>4}   true {len(figures['true'])}, "
        f"false {len(figures['false'])}   precision {precision:.0%}"
    )
    print(
        f"  doc defects labelled     {figures['defects']:>4}   reported {figures['found']:>4}   "
        f"recall {ratio(figures['found'], figures['defects']):.0%}"
    )
    print(f"  seconds                  {figures['seconds']:>6.1f}")
    for key, severity, message in figures["false"]:
        print(f"    false alarm {key[0]}:{key[1]} {severity}: {message}")
    for key, reason in figures["missed_defects"]:
        print(f"    missed defect {key[0]}:{key[1]}: {reason}")
    for key in figures["missed_blocks"]:
        print(f"    not extracted as runnable {key[0]}:{key[1]}")
    for key in figures["unlabelled_failures"]:
        print(f"    unlabelled failure {key[0]}:{key[1]}")
    if details:
        for message in figures["setup_problems"]:
            print(f"    setup problem: {message}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--warm-up", action="store_true", help="validate once untimed first (fills the caches)")
    parser.add_argument("--num-workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--library", help="only this library")
    parser.add_argument("--show-failures", action="store_true", help="also list the setup problems")
    args = parser.parse_args()
    corpus = json.loads(LABELS.read_text())
    libraries = [lib for lib in corpus["libraries"] if not args.library or lib["name"] == args.library]
    all_figures = []
    with tempfile.TemporaryDirectory() as output:
        for library in libraries:
            labels = [label for label in corpus["labels"] if label["library"] == library["name"]]
            if args.warm_up:
                measure(library["name"], library["version"], labels, args.num_workers, Path(output) / "warm")
            figures = measure(library["name"], library["version"], labels, args.num_workers, Path(output) / "run")
            show(figures, args.show_failures)
            all_figures.append(figures)
    total = {
        key: sum(len(f[key]) if isinstance(f[key], list) else f[key] for f in all_figures)
        for key in (
            "labelled",
            "extracted",
            "statements",
            "statements_run",
            "true",
            "false",
            "defects",
            "found",
            "seconds",
        )
    }
    figures = {
        "extracted": ratio(total["extracted"], total["labelled"]),
        "statements": ratio(total["statements_run"], total["statements"]),
        "precision": ratio(total["true"], total["true"] + total["false"]),
        "recall": ratio(total["found"], total["defects"]),
        "seconds": total["seconds"],
    }
    print(
        f"\nAll {len(all_figures)} libraries ({args.num_workers} workers"
        + (", warm cache" if args.warm_up else "")
        + "):"
    )
    for key, value in figures.items():
        target = TARGETS[key]
        met = value <= target if key == "seconds" else value >= target
        shown = f"{value:.1f} s" if key == "seconds" else f"{value:.0%}"
        wanted = f"<= {target:.0f} s" if key == "seconds" else f">= {target:.0%}"
        print(f"  {key:<11} {shown:>8}   target {wanted:<9} {'met' if met else 'NOT MET'}")


if __name__ == "__main__":
    main()
