"""Values that change from one run of the same code to the next (times, dates, memory addresses, ids, durations,
paths), each defined once with the mask it is shown as. Output comparison masks them before it tells a
difference in format from a real one (output_compare); a finding's identity across runs masks them before it is
hashed (fingerprints)."""

import re

# 2024-05-06T07:08:09.123+02:00, 2024-05-06 07:08
TIMESTAMP = (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"), "<time>")
# Logging's 2024-05-06 07:08:09,123: its milliseconds go before the timestamp they belong to is masked.
COMMA_MILLISECONDS = (re.compile(r"(?<=\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}),\d+"), "")
DATE = (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>")
CLOCK = (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>")
EPOCH = (re.compile(r"\b1\d{9}(?:\.\d+)?\b"), "<epoch>")
ADDRESS = (re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), "<addr>")
UUID = (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>")
DURATION = (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|seconds)\b"), "<duration>")
PROCESS_ID = (re.compile(r"\b(?:pid|process|thread|thread_id|process_id)[=:]\s*\d+"), "<id>")
LONG_DECIMAL = (re.compile(r"\b\d+\.\d{4,}\b"), "<number>")
URL = (re.compile(r"https?://\S+"), "<url>")
PATH = (re.compile(r"(?<![\w`])(?:/[\w.@+-]+){2,}/?"), "<path>")
HEX_ID = (re.compile(r"\b[0-9a-f]{12,}\b"), "<id>")


def masked(text: str, values: list[tuple[re.Pattern, str]]) -> str:
    for pattern, mask in values:
        text = pattern.sub(mask, text)
    return text
