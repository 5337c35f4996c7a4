"""Identity of a finding across runs: a gap seen in several runs is one problem. The fingerprint keeps what
identifies the finding (library, walkthrough or page, step title or example code, gap type, the wording)
and drops what changes between runs of the same problem (numbers, paths, addresses, timestamps, line
numbers, step positions). The rules are versioned: changing them changes FINGERPRINT_VERSION."""

import hashlib
import re

from stackbench.lib.ansi import strip_ansi
from stackbench.lib.snippets import code_hash
from stackbench.lib.volatile import ADDRESS, PATH, RUN_TO_RUN, URL, masked

# 2: the run-to-run values are output comparison's table (volatile.RUN_TO_RUN), terminal codes are dropped.
FINGERPRINT_VERSION = 2

# The run-to-run values output comparison masks too, then coarser steps of its own: every hex literal is an
# address (a short one too), every URL and path a value, every number a number.
_VOLATILE = [
    *RUN_TO_RUN,
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), ADDRESS[1]),
    URL,
    PATH,
    (re.compile(r"\d+(\.\d+)?"), "<n>"),
]


def normalize_text(text: str) -> str:
    text = masked(strip_ansi(text or "").strip(), _VOLATILE)
    return re.sub(r"\s+", " ", text).lower()


def _digest(*parts: str) -> str:
    joined = "\x1f".join([f"v{FINGERPRINT_VERSION}", *parts])
    return hashlib.sha256(joined.encode()).hexdigest()[:32]


def gap_fingerprint(library: str, walkthrough_id: str, step_title: str, gap_type: str, description: str) -> str:
    return _digest(
        "gap", library.lower(), walkthrough_id, normalize_text(step_title), gap_type, normalize_text(description)
    )


def example_fingerprint(library: str, page: str, code: str, error_message: str | None) -> str:
    error_kind = (error_message or "").split(":", 1)[0]
    return _digest(
        "example",
        library.lower(),
        page,
        code_hash(code),
        normalize_text(error_kind),
        normalize_text(error_message or ""),
    )
