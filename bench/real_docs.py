"""Code-example validation measured on real documentation: the docs/ Markdown (or the README) shipped in PyPI
sdists, validated against that exact release and compared with hand-made labels (bench/real_docs/labels.json: one entry per
Python block a reader would run, with the verdict found by following it by hand). The corpus is split in two
halves (bench/real_docs/CORPUS.md): tune, which rules may be written for, and check, which is only run at the
end of a piece of work; the check half's figures are the ones that count.

    .venv/bin/python bench/real_docs.py [--half tune|check] [--warm-up] [--num-workers N] [--library NAME]
                                        [--show-failures] [--findings FILE]

It downloads what it needs at run time (each release's sdist from PyPI's index, checked by its sha256) into var/bench/sdists and
prints, per library: blocks labelled vs extracted as runnable, doctest statements run with their output compared,
reported failures (error and warning) that are labelled doc defects (true) or not (false), precision, recall and
seconds (recall counts a block labelled as failing only because of an earlier block, its `cause`, as found when that
block is reported, and a block the tool lists as a repeat of an earlier example's failure, the same cause outside
the block, as found when that example is reported; strict recall does neither); then the same over each half, with the targets (for time: the median library's seconds; the sum is
shown too). --warm-up validates once untimed first, so the timed pass has a warm package cache (the target is for a
warm cache). Each false alarm, miss and setup problem is listed only with --show-failures, so a check half's
figures can be read without reading its failures.

Some libraries were labelled twice, by people who saw neither the tool nor the first labels
(bench/real_docs/second_labels.json). For them it also prints the figures on the blocks both labellers agree on
(defect or not), and the second labeller scored against the first as if it were the tool: how far two careful
readers of the same pages differ, a ceiling no tool can pass on the first labels alone."""

import argparse
import hashlib
import io
import json
import os
import re
import statistics
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")

from stackbench.docs.extractor import extract_docs  # noqa: E402
from stackbench.docs.includes import Origin, expand  # noqa: E402
from stackbench.formats.walkthrough import RUNNABLE_STYLES  # noqa: E402
from stackbench.validation.batch import validate_all  # noqa: E402
from stackbench_site.configuration import validation_options  # noqa: E402

LABELS = BASE_DIR / "bench" / "real_docs" / "labels.json"
# A second labelling of some libraries, by people who saw neither the tool nor the first labels (same brief).
SECOND_LABELS = BASE_DIR / "bench" / "real_docs" / "second_labels.json"
SDISTS = BASE_DIR / "var" / "bench" / "sdists"
RUNNABLE_VERDICTS = ("pass", "doc_defect", "needs_env")
HALVES = ("tune", "check")
TARGETS = {
    "extracted": 0.95,
    "statements": 0.90,
    "precision": 0.90,
    "recall": 0.80,
    "strict recall": 0.80,
    "median seconds": 15.0,
}


def docs_folder(name: str, version: str, folder: str = "docs") -> Path:
    """The docs folder of the release's sdist (`docs/`, or the sdist's root for a library whose page is its
    README), downloaded once from PyPI's index (its JSON simple API, PEP 691)
    and checked against the index's sha256. The archive is fetched, never built: `pip download --no-binary` would
    build the sdist's metadata, and some build backends cannot be built here."""
    unpacked = SDISTS / f"{name}-{version}"
    if not unpacked.is_dir():
        SDISTS.mkdir(parents=True, exist_ok=True)
        request = urllib.request.Request(
            f"https://pypi.org/simple/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            files = json.load(response)["files"]
        wanted = {f"{spelling}-{version}.tar.gz" for spelling in (name, name.replace("-", "_"), name.replace("_", "-"))}
        found = next((f for f in files if f["filename"].lower() in {w.lower() for w in wanted}), None)
        if found is None:
            sys.exit(f"{name} {version}: PyPI lists no sdist (.tar.gz) for this release")
        with urllib.request.urlopen(urllib.parse.urljoin(request.full_url, found["url"]), timeout=600) as response:
            archive = response.read()
        if hashlib.sha256(archive).hexdigest() != found["hashes"]["sha256"]:
            sys.exit(f"{name} {version}: the downloaded sdist does not match PyPI's sha256")
        with tempfile.TemporaryDirectory() as unpack:
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(unpack, filter="data")
            (Path(unpack) / found["filename"][: -len(".tar.gz")]).rename(unpacked)
    return unpacked / folder


def measure(library: dict, labels: list[dict], second_labels: list[dict], workers: int, output: Path) -> dict:
    """A library's figures; when the corpus names the pages that were labelled, only those are validated."""
    name, version = library["name"], library["version"]
    docs = docs_folder(name, version, library.get("folder", "docs"))
    started = time.monotonic()
    report = extract_docs(docs, name, version, include="*.md")
    pages = set(library.get("pages") or [])
    analyses = [analysis for page, analysis in report.analyses if not pages or page in pages]
    summary = validate_all(analyses, output, validation_options(timeout=30, num_workers=workers))
    seconds = time.monotonic() - started
    # A block is known by its page and line, and by the file it is included from (lines of several included
    # files may coincide on one page); a label that names no file is looked up there too.
    examples = {block_key(a, e): e for a in analyses for e in a.examples}
    by_page = {a.page: a for a in analyses}
    results = {
        block_key(by_page[d.page], by_page[d.page].examples[r.example_index]): r
        for d in summary.documents
        for r in d.results
    }
    # A label gives the first line of the code itself; a block whose fence opens with blank lines starts before it.
    starts = {
        (a.page, e.line + len(e.code) - len(e.code.lstrip("\n")), e.snippet_source or ""): block_key(a, e)
        for a in analyses
        for e in a.examples
    }
    for analysis in analyses:
        for place, key in [*shown_at_includes(docs, analysis).items(), *at_directive_options(docs, analysis).items()]:
            starts.setdefault(place, key)
    unique_lines: dict[tuple[str, int], list[tuple[str, int, str]]] = {}
    for key in starts.values():
        if key[2]:
            unique_lines.setdefault(key[:2], []).append(key)

    def keyed(labels: list[dict]) -> dict[tuple[str, int, str], dict]:
        by_key = {}
        for label in labels:
            key = (label["page"], label["line"], label.get("source") or "")
            if key not in starts and not key[2] and len(set(unique_lines.get(key[:2], []))) == 1:
                key = unique_lines[key[:2]][0]  # an included block's own line, its file not named
            by_key[starts.get(key, key)] = label
        return by_key

    labelled = keyed(labels)
    second = keyed(second_labels)

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
    # A block labelled as failing only because an earlier block failed (its label names that block, `cause`) is
    # fixed by fixing that block: reporting the cause tells the team. It counts as found there, and apart.
    causes = {
        key: starts.get((key[0], label["cause"], ""), (key[0], label["cause"], ""))
        for key, label in labelled.items()
        if label.get("cause")
    }

    def at_cause(key: tuple[str, int, str]) -> bool:
        seen = set()
        while key in causes and key not in seen:
            seen.add(key)
            key = causes[key]
            if key in reported:
                return True
        return False

    # A failure the tool lists as a repeat of an earlier example's (the same cause outside the block, counted
    # there) is reported with that example: found when that one is, and no finding of its own.
    example_keys = {(a.page, n): block_key(a, e) for a in analyses for n, e in enumerate(a.examples)}
    repeats = {
        key: example_keys[(key[0], r.repeats_example)]
        for key, r in results.items()
        if r.status == "failure" and r.repeats_example is not None and example_keys.get((key[0], r.repeats_example))
    }
    repeated = {key: first for key, first in repeats.items() if first in reported}
    found = [key for key in defects if key in reported]
    found_at_cause = [key for key in defects if key not in reported and (key in repeated or at_cause(key))]
    # Where a second labeller followed the same pages, the blocks both call a defect, or both call something
    # else, are the facts; the others are disputed, and the agreed figures leave them out.
    agreed = {key for key in labelled if key in second and is_defect(labelled[key]) == is_defect(second[key])}
    agreed_defects = [key for key in defects if key in agreed]
    second_defects = [key for key in second if is_defect(second[key])]
    return {
        "name": name,
        "version": version,
        "half": library["half"],
        "labelled": len(runnable),
        "extracted": len(extracted),
        "missed_blocks": sorted(set(runnable) - set(extracted)),
        "statements": sum(r.statements for r in sessions),
        "statements_run": sum(r.statements_run or 0 for r in sessions),
        "true": true,
        "false": [(key, reported[key].severity, (reported[key].error_message or "")[:160]) for key in false],
        "repeats_true": len([key for key in repeated if labelled.get(key, {}).get("verdict") == "doc_defect"]),
        "repeats_false": len([key for key in repeated if labelled.get(key, {}).get("verdict") != "doc_defect"]),
        "defects": len(defects),
        "found": len(found),
        "found_at_cause": len(found_at_cause),
        "missed_defects": [
            (key, labelled[key]["reason"], told(results.get(key)))
            for key in defects
            if key not in reported and key not in found_at_cause
        ],
        "unlabelled_failures": [key for key in reported if key not in labelled],
        "second_labelled": len(second),
        "agreed": len(agreed),
        "agreed_true": len([key for key in true if key in agreed]),
        "agreed_false": len([key for key in false if key in agreed]),
        "agreed_defects": len(agreed_defects),
        "agreed_found": len([key for key in agreed_defects if key in found or key in found_at_cause]),
        "second_defects": len(second_defects),
        "second_true": len([key for key in second_defects if key in defects]),
        "defects_second_labelled": len([key for key in defects if key in second]),
        "setup_problems": [p.message for d in summary.documents for p in d.setup_problems],
        "seconds": seconds,
        "findings": [
            {
                "library": name,
                "block": shown(key),
                "label": labelled.get(key, {}).get("verdict"),
                "severity": result.severity,
                "message": result.error_message,
                "suggestion": result.suggestions,
            }
            for key, result in reported.items()
        ],
    }


def is_defect(label: dict) -> bool:
    return label["verdict"] == "doc_defect"


def told(result) -> str:
    """What the tool said of a block, in one line."""
    if result is None:
        return "not run"
    said = " ".join((result.error_message or "").split())[:200]
    return f"{result.status}" + (f" ({result.severity})" if result.severity else "") + (f": {said}" if said else "")


def block_key(analysis, example) -> tuple[str, int, str]:
    return (analysis.page, example.line, example.snippet_source or "")


def shown(key: tuple[str, int, str]) -> str:
    return f"{key[0]}:{key[1]}" + (f" ({key[2]})" if key[2] else "")


def shown_at_includes(docs: Path, analysis) -> dict[tuple[str, int, str], tuple[str, int, str]]:
    """A label may give an included block at the page's include directive (`@[code](app.py)`, a literalinclude,
    an {include}) rather than at its own file's line, where the tool reports it: the page lines from the one
    before the directive to the one after it stand for the first block it includes."""
    included = [e for e in analysis.examples if e.snippet_source]
    if not included:
        return {}
    origins = expand(docs / analysis.page, docs).origins
    own = [n for n, origin in enumerate(origins) if origin.source == analysis.page]
    aliases: dict[tuple[str, int, str], tuple[str, int, str]] = {}
    for example in included:
        places = [n for n, origin in enumerate(origins) if origin == Origin(example.snippet_source, example.line)]
        for place in places:
            before = max((origins[n].line for n in own if n <= place), default=1)
            after = min((origins[n].line for n in own if n >= place), default=before)
            for line in range(before, after + 1):
                aliases.setdefault((analysis.page, line, ""), block_key(analysis, example))
    return aliases


DIRECTIVE_OPTION = re.compile(r"^\s*:[\w-]+:")


def at_directive_options(docs: Path, analysis) -> dict[tuple[str, int, str], tuple[str, int, str]]:
    """A label may give a MyST directive's block at its first content line, an option (`:tags: [...]`), where the
    tool gives the code's first line after the options: the option lines (and blank lines after them) stand for
    the block."""
    lines = (docs / analysis.page).read_text(encoding="utf-8", errors="replace").split("\n")
    aliases: dict[tuple[str, int, str], tuple[str, int, str]] = {}
    for example in analysis.examples:
        if example.snippet_source:
            continue
        number = example.line - 1
        while 1 <= number <= len(lines) and (
            not lines[number - 1].strip() or DIRECTIVE_OPTION.match(lines[number - 1])
        ):
            if DIRECTIVE_OPTION.match(lines[number - 1]):
                for line in range(number, example.line):
                    aliases.setdefault((analysis.page, line, ""), block_key(analysis, example))
            number -= 1
    return aliases


def ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def show(figures: dict, details: bool):
    precision = ratio(len(figures["true"]), len(figures["true"]) + len(figures["false"]))
    print(f"\n{figures['name']} {figures['version']} ({figures['half']} half)")
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
    found = figures["found"] + figures["found_at_cause"]
    print(
        f"  doc defects labelled     {figures['defects']:>4}   reported {figures['found']:>4}   at cause/first "
        f"{figures['found_at_cause']:>3}   recall {ratio(found, figures['defects']):.0%} "
        f"(strict {ratio(figures['found'], figures['defects']):.0%})"
    )
    if figures["repeats_true"] + figures["repeats_false"]:
        print(
            f"  repeats of those         {figures['repeats_true'] + figures['repeats_false']:>4}   true "
            f"{figures['repeats_true']}, false {figures['repeats_false']}   (listed as info, counted at the first)"
        )
    print(f"  seconds                  {figures['seconds']:>6.1f}")
    if figures["second_labelled"]:
        print(agreement(figures))
    if not details:
        return
    for key, severity, message in figures["false"]:
        print(f"    false alarm {shown(key)} {severity}: {message}")
    for key, reason, said in figures["missed_defects"]:
        print(f"    missed defect {shown(key)}: {reason}\n      the tool: {said}")
    for key in figures["missed_blocks"]:
        print(f"    not extracted as runnable {shown(key)}")
    for key in figures["unlabelled_failures"]:
        print(f"    unlabelled failure {shown(key)}")
    for message in figures["setup_problems"]:
        print(f"    setup problem: {message}")


AGREEMENT_FIGURES = (
    "second_labelled",
    "agreed",
    "agreed_true",
    "agreed_false",
    "agreed_defects",
    "agreed_found",
    "second_defects",
    "second_true",
    "defects_second_labelled",
)


def agreement(figures: dict) -> str:
    """The figures on the blocks two labellers agree on, and the second labeller scored as a tool against the first:
    how far careful people following the same pages differ, which no tool can beat on the first labels alone."""
    agreed_reported = figures["agreed_true"] + figures["agreed_false"]
    return (
        f"  second labeller          {figures['second_labelled']:>4}   agrees on {figures['agreed']:>4}   there: precision "
        f"{ratio(figures['agreed_true'], agreed_reported):.0%} ({figures['agreed_true']}/{agreed_reported}), recall "
        f"{ratio(figures['agreed_found'], figures['agreed_defects']):.0%} "
        f"({figures['agreed_found']}/{figures['agreed_defects']})\n"
        f"  second against first     precision {ratio(figures['second_true'], figures['second_defects']):.0%} "
        f"({figures['second_true']}/{figures['second_defects']}), recall "
        f"{ratio(figures['second_true'], figures['defects_second_labelled']):.0%} "
        f"({figures['second_true']}/{figures['defects_second_labelled']})"
    )


def summarize(label: str, all_figures: list[dict], workers: int, warm: bool) -> None:
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
            "found_at_cause",
            "repeats_true",
            "repeats_false",
            "seconds",
        )
    }
    figures = {
        "extracted": ratio(total["extracted"], total["labelled"]),
        "statements": ratio(total["statements_run"], total["statements"]),
        "precision": ratio(total["true"], total["true"] + total["false"]),
        "recall": ratio(total["found"] + total["found_at_cause"], total["defects"]),
        "strict recall": ratio(total["found"], total["defects"]),
        "median seconds": statistics.median(f["seconds"] for f in all_figures),
    }
    twice = [f for f in all_figures if f["second_labelled"]]
    names = ", ".join(f["name"] for f in all_figures)
    print(
        f"\n{label}: {len(all_figures)} libraries ({names}; {workers} workers" + (", warm cache" if warm else "") + "):"
    )
    print(
        f"  blocks labelled runnable {total['labelled']}, extracted runnable {total['extracted']}; "
        f"failures reported {total['true'] + total['false']} (true {total['true']}, false {total['false']}); "
        f"doc defects labelled {total['defects']}, reported {total['found']}, found at their cause or first example "
        f"{total['found_at_cause']}; {total['seconds']:.1f} s in all"
    )
    block_true, block_false = total["true"] + total["repeats_true"], total["false"] + total["repeats_false"]
    print(
        f"  repeats (a cause outside the block, counted at its first example, listed as info): "
        f"{total['repeats_true'] + total['repeats_false']} (true {total['repeats_true']}, false "
        f"{total['repeats_false']}); counting each as a finding of its own, precision "
        f"{ratio(block_true, block_true + block_false):.0%} ({block_true}/{block_true + block_false})"
    )
    for key, value in figures.items():
        target = TARGETS[key]
        timed = key == "median seconds"  # per library, for a warm cache: one library's wait, whatever the corpus
        met = value <= target if timed else value >= target
        shown = f"{value:.1f} s" if timed else f"{value:.0%}"
        wanted = f"<= {target:.0f} s" if timed else f">= {target:.0%}"
        print(f"  {key:<14} {shown:>8}   target {wanted:<9} {'met' if met else 'NOT MET'}")
    if twice:
        both = {key: sum(f[key] for f in twice) for key in AGREEMENT_FIGURES}
        print(f"  labelled twice: {len(twice)} of {len(all_figures)} libraries ({', '.join(f['name'] for f in twice)})")
        print(agreement(both))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--half", choices=HALVES, help="only this half of the corpus (default: both)")
    parser.add_argument("--warm-up", action="store_true", help="validate once untimed first (fills the caches)")
    parser.add_argument("--num-workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--library", help="only this library")
    parser.add_argument(
        "--show-failures",
        action="store_true",
        help="list each false alarm, miss and setup problem (not for an unread check half)",
    )
    parser.add_argument(
        "--findings",
        type=Path,
        help="write every reported failure with its label to this JSON Lines file, to count failures by kind "
        "(not for an unread check half)",
    )
    args = parser.parse_args()
    corpus = json.loads(LABELS.read_text())
    second_corpus = json.loads(SECOND_LABELS.read_text())["labels"] if SECOND_LABELS.exists() else []
    libraries = [
        lib
        for lib in corpus["libraries"]
        if (not args.library or lib["name"] == args.library) and (not args.half or lib["half"] == args.half)
    ]
    all_figures = []
    with tempfile.TemporaryDirectory() as output:
        for library in libraries:
            labels = [label for label in corpus["labels"] if label["library"] == library["name"]]
            second = [label for label in second_corpus if label["library"] == library["name"]]
            if args.warm_up:
                measure(library, labels, second, args.num_workers, Path(output) / "warm")
            figures = measure(library, labels, second, args.num_workers, Path(output) / "run")
            show(figures, args.show_failures)
            all_figures.append(figures)
            if args.findings:
                with args.findings.open("a") as findings:
                    findings.writelines(json.dumps(finding) + "\n" for finding in figures["findings"])
    for half in HALVES:
        in_half = [f for f in all_figures if f["half"] == half]
        if in_half:
            title = "Check half (the figure that counts)" if half == "check" else "Tune half"
            summarize(title, in_half, args.num_workers, args.warm_up)


if __name__ == "__main__":
    main()
