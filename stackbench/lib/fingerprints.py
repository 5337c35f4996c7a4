"""Identity of a finding across runs: a gap seen in several runs is one problem. The fingerprint keeps what
identifies the finding (library, walkthrough or page, step title or example code, gap type, the wording)
and drops what changes between runs of the same problem (numbers, paths, addresses, timestamps, line
numbers, step positions). The rules are versioned: changing them changes FINGERPRINT_VERSION."""

import hashlib
import re

from stackbench.lib.ansi import strip_ansi
from stackbench.lib.snippets import code_hash
from stackbench.lib.volatile import ADDRESS, PATH, TIMESTAMP, URL, masked

FINGERPRINT_VERSION = 1

# The run-to-run values, with coarser steps of its own: every hex literal is an address (a short one too), every
# run of 12+ hex digits an id, every number a number. Coarser than output comparison's table (volatile.RUN_TO_RUN:
# whatever it masks, these steps mask too, down to the numbers) and kept as it is, in this order: the stored
# fingerprints were made with it, and a change would make every stored problem look new and lose its triage.
_VOLATILE = [
    TIMESTAMP,
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), ADDRESS[1]),
    URL,
    PATH,
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<id>"),
    (re.compile(r"\d+(\.\d+)?"), "<n>"),
]


def normalize_text(text: str) -> str:
    text = masked(strip_ansi(text or "").strip(), _VOLATILE)  # stored text has none; older rows may
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
