"""Values that change from one run of the same code to the next (times, dates, memory addresses, ids, durations,
temporary paths, generated names), each defined once with the mask it is shown as, and RUN_TO_RUN: the one table
of them, in the order they are masked. Output comparison masks it before it tells a difference in format from a real one
(output_compare); a finding's identity across runs masks it before it is hashed (fingerprints)."""

import re

# 2024-05-06T07:08:09.123+02:00, 2024-05-06 07:08
TIMESTAMP = (re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b"), "<time>")
# Logging's 2024-05-06 07:08:09,123: its milliseconds go before the timestamp they belong to is masked.
COMMA_MILLISECONDS = (re.compile(r"(?<=\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}),\d+"), "")
_DAY, _MONTH = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)", r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
# time.ctime()'s `Mon Jan  1 10:00:00 2024` and HTTP's `Mon, 01 Jan 2024 10:00:00 GMT`
WEEKDAY_TIMESTAMP = (
    re.compile(
        rf"\b{_DAY} {_MONTH} [ \d]\d \d{{2}}:\d{{2}}:\d{{2}} \d{{4}}\b"
        rf"|\b{_DAY}, \d{{2}} {_MONTH} \d{{4}} \d{{2}}:\d{{2}}:\d{{2}} GMT\b"
    ),
    "<time>",
)
DATE = (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "<date>")
CLOCK = (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>")
EPOCH = (re.compile(r"\b1\d{9}(?:\.\d+)?\b"), "<epoch>")
ADDRESS = (re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), "<addr>")
# What a repr says an object is at is its address, however short the page wrote it (`at 0x7f`, `at 0x7f..`).
OBJECT_ADDRESS = (re.compile(r"(?<=\bat )0x[0-9a-fA-F]+(?:\.{2,}|…)?"), "<addr>")
UUID = (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>")
DURATION = (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|seconds)\b"), "<duration>")
# A rate measured while it ran: `171.62/s`, `35.2 it/s`, `12 MB/s` (masked in outputs compared; fingerprints keep
# the table below, as stored problems were matched by it).
RATE = (re.compile(r"\b\d+(?:\.\d+)?\s?(?:[A-Za-z]{1,5})?/(?:s|sec|min|h)\b"), "<rate>")
PROCESS_ID = (re.compile(r"\b(?:pid|process|thread|thread_id|process_id)[=:]\s*\d+"), "<id>")
LONG_DECIMAL = (re.compile(r"\b\d+\.\d{4,}\b"), "<number>")
URL = (re.compile(r"https?://\S+"), "<url>")
# A temporary file or folder: the system's temporary folders hold names made up anew on each run.
TEMPORARY_PATH = (re.compile(r"(?<![\w/])/(?:private/)?(?:tmp|var/tmp|var/folders)(?:/[\w.@+-]+)+/?"), "<tmp>")
PATH = (re.compile(r"(?<![\w`])(?:/[\w.@+-]+){2,}/?"), "<path>")
# Where a module's repr says it was loaded from: the file in whoever ran it's own installation.
MODULE_FILE = (re.compile(r"(<module '[\w.]+' from )'[^'\n]*'"), r"\1'<path>'")
# A hex id (uuid4().hex, a request id): both letters and digits, so a long number is not one.
HEX_ID = (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12,}\b"), "<id>")
# A name a library makes up for what it generates (a query's table alias `a3`, a temporary table `t94228042`): one
# letter and a counter or a random number, which the next run numbers otherwise. An HTML tag (`<h1>`, `</h2>`) and
# a version (`v2`) are values, not made-up names.
GENERATED_NAME = (re.compile(r"(?<![<>/\w])(?!v\d)[a-z]\d+\b"), "<name>")

# Every run-to-run value, in the order they are masked: a temporary path whole, a timestamp before the date and
# the clock it holds, a uuid before the hex ids it is made of. Paths and URLs are not in it: what they name is often what a page
# documents; each user says where they are values.
RUN_TO_RUN = [
    MODULE_FILE,
    TEMPORARY_PATH,
    COMMA_MILLISECONDS,
    TIMESTAMP,
    WEEKDAY_TIMESTAMP,
    DATE,
    CLOCK,
    EPOCH,
    OBJECT_ADDRESS,
    ADDRESS,
    UUID,
    HEX_ID,
    DURATION,
    PROCESS_ID,
    GENERATED_NAME,
    LONG_DECIMAL,
]


def masked(text: str, values: list[tuple[re.Pattern, str]]) -> str:
    for pattern, mask in values:
        text = pattern.sub(mask, text)
    return text
