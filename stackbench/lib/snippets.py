"""The identity of a code snippet, shared by a doc page's code examples and the code blocks a walkthrough step
shows, so findings about the same code meet: whitespace and comment lines do not change it."""

import hashlib
import re


def normalize_code(code: str) -> str:
    lines = [re.sub(r"\s+", " ", line.strip()) for line in (code or "").splitlines()]
    return "\n".join(line for line in lines if line and not line.startswith("#"))


def code_hash(code: str) -> str:
    return hashlib.sha256(normalize_code(code).encode()).hexdigest()[:16]
