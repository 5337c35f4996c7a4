"""Code-example validation speed: 7 documents, 28 examples of small PyPI libraries, a fresh virtualenv per
document, warm package cache (a first, untimed pass fills it). Prints the whole run, each virtualenv's
creation and install, and each example's run.

    .venv/bin/python bench/validate.py [--num-workers N]

Target: under 10 s on 2 cores (the existing LLM-driven tool takes about 45 s for this much)."""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")

from stackbench.formats.walkthrough import CodeExample, ExtractionAnalysis
from stackbench.validation.batch import validate_all
from stackbench.validation.document_sandbox import DocumentSandbox
from stackbench.validation.page_process import PageProcess
from stackbench_site.configuration import validation_options

DOCUMENTS = {
    ("toolz", "0.12.1"): [
        "from toolz import curry, pipe",
        "inc = curry(lambda x, y: x + y)(1)",
        "print(pipe(1, inc, inc))",
        "from toolz import frequencies\nprint(frequencies('docs'))",
    ],
    ("python-dateutil", "2.9.0.post0"): [
        "from dateutil import parser",
        "when = parser.parse('2024-03-01T10:00')",
        "print(when.isoformat())",
        "from dateutil.relativedelta import relativedelta\nprint(when + relativedelta(months=1))",
    ],
    ("six", "1.16.0"): ["import six", "print(six.PY3)", "print(six.text_type('x'))", "print(list(six.moves.range(3)))"],
    ("attrs", "23.2.0"): [
        "import attr",
        "@attr.s\nclass Point:\n    x = attr.ib()\n    y = attr.ib()",
        "p = Point(1, 2)\nprint(p)",
        "print(attr.asdict(p))",
    ],
    ("more-itertools", "10.2.0"): [
        "from more_itertools import chunked",
        "print(list(chunked(range(7), 3)))",
        "from more_itertools import first\nprint(first([3, 4]))",
        "from more_itertools import windowed\nprint(list(windowed(range(4), 2)))",
    ],
    ("tabulate", "0.9.0"): [
        "from tabulate import tabulate",
        "rows = [['a', 1], ['b', 2]]",
        "print(tabulate(rows))",
        "print(tabulate(rows, headers=['k', 'v'], tablefmt='github'))",
    ],
    ("humanize", "4.9.0"): [
        "import humanize",
        "print(humanize.intcomma(1234567))",
        "print(humanize.naturalsize(1_000_000))",
        "print(humanize.ordinal(3))",
    ],
}


def analyses():
    result = []
    for (library, version), codes in DOCUMENTS.items():
        examples = [CodeExample(library=library, code=code, line=5 + 10 * i) for i, code in enumerate(codes)]
        result.append(ExtractionAnalysis(page=f"{library}.md", library=library, version=version, examples=examples))
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=None)
    args = parser.parse_args()
    options = validation_options(timeout=60, **({"num_workers": args.num_workers} if args.num_workers else {}))
    installs, runs = [], []
    original_install, original_request = DocumentSandbox.install, PageProcess.request

    def timed_install(self, requirements):
        started = time.perf_counter()
        outcome = original_install(self, requirements)
        installs.append(time.perf_counter() - started)
        return outcome

    def timed_request(self, request, timeout, remember=False):
        started = time.perf_counter()
        outcome = original_request(self, request, timeout, remember)
        if request.get("op") in ("script", "session"):
            runs.append(time.perf_counter() - started)
        return outcome

    DocumentSandbox.install, PageProcess.request = timed_install, timed_request
    with tempfile.TemporaryDirectory() as folder:
        validate_all(analyses(), Path(folder) / "warm", options)
        installs.clear()
        runs.clear()
        started = time.perf_counter()
        summary = validate_all(analyses(), Path(folder) / "timed", options)
        total = time.perf_counter() - started
    print(
        f"{summary.total_documents} documents, {summary.total_examples} examples, {options.num_workers} workers; "
        f"{summary.successful} passed, {summary.failed} failed"
    )
    print(f"whole validation (warm cache): {total:.2f} s   (target < 10 s; the LLM-driven tool: ~45 s)")
    print(
        f"install per document (virtualenv copied from a template): median {statistics.median(installs) * 1000:.0f} "
        f"ms, max {max(installs) * 1000:.0f} ms"
    )
    print(f"example run: median {statistics.median(runs) * 1000:.0f} ms, max {max(runs) * 1000:.0f} ms")
    if summary.failed:
        for document in summary.documents:
            for result in document.results:
                if result.status == "failure":
                    print(f"  failed: {document.page} #{result.example_index}: {result.error_message}")


if __name__ == "__main__":
    main()
