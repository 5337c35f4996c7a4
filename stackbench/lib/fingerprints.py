"""Identity of a finding across runs: a gap seen in several runs is one problem. The fingerprint keeps what
identifies the finding (library, walkthrough or page, step title or example code, gap type, the wording)
and drops what changes between runs of the same problem (numbers, paths, addresses, timestamps, line
numbers, step positions). The rules are versioned: changing them changes FINGERPRINT_VERSION."""

import hashlib
import re

from stackbench.lib.snippets import code_hash
from stackbench.lib.volatile import ADDRESS, HEX_ID, PATH, TIMESTAMP, URL, masked

FINGERPRINT_VERSION = 1

# The run-to-run values, with two coarser steps of its own: every hex literal is an address (a short one too),
# every number a number. In this order: the stored fingerprints were made with it.
_VOLATILE = [
    TIMESTAMP,
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), ADDRESS[1]),
    URL,
    PATH,
    HEX_ID,
    (re.compile(r"\d+(\.\d+)?"), "<n>"),
]


def normalize_text(text: str) -> str:
    text = masked((text or "").strip(), _VOLATILE)
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
