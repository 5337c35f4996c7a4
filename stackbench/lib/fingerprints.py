"""Identity of a finding across runs: a gap seen in several runs is one problem. The fingerprint keeps what
identifies the finding (library, walkthrough or page, step title or example code, gap type, the wording)
and drops what changes between runs of the same problem (numbers, paths, addresses, timestamps, line
numbers, step positions). The rules are versioned: changing them changes FINGERPRINT_VERSION."""

import hashlib
import re

from stackbench.lib.snippets import code_hash

FINGERPRINT_VERSION = 1

_VOLATILE = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b"), "<time>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<addr>"),
    (re.compile(r"https?://\S+"), "<url>"),
    (re.compile(r"(?<![\w`])(?:/[\w.@+-]+){2,}/?"), "<path>"),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "<id>"),
    (re.compile(r"\d+(\.\d+)?"), "<n>"),
]


def normalize_text(text: str) -> str:
    text = (text or "").strip()
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
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
