"""Terminal colour and style codes, which a reader never sees as text: `\\x1b[1m`, and the bare `[1m` that is left
when a log or a copy lost the escape character."""

import re

# A bare code is never closed by a bracket: `[5m]` is text (five minutes), `[5m` a lost escape.
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\[[0-9]{1,3}(?:;[0-9]{1,3})*m(?!\])")


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def strip_ansi_or_none(text: str | None) -> str | None:
    return None if text is None else strip_ansi(text)
