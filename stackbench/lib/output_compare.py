"""Does what an example printed match what its page shows? Three answers: the same (as doctest would accept it,
or laid out differently: docs pretty-print long values), different only in format (timestamps, memory
addresses, ids, the version in a URL: things no two runs share), or different."""

import ast
import difflib
import doctest
import re
from typing import Literal

from stackbench.lib.ansi import strip_ansi
from stackbench.lib.volatile import PATH, RATE, RUN_TO_RUN, masked

Match = Literal["same", "format", "different"]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_checker = doctest.OutputChecker()

# The values that change from run to run, and a path where a value is labelled (`path: /tmp/x`): elsewhere a path
# is what the page documents.
MASKS = [
    RATE,
    *RUN_TO_RUN,
    (re.compile(r"(?<=[=:] )['\"]?" + PATH[0].pattern + r"['\"]?"), PATH[1]),
    # A traceback's frames name files on the machine that ran it: the author's paths and line numbers are not the
    # reader's.
    (re.compile(r'(?<=File ")[^"\n]+(?=", line \d+)'), "<file>"),
    (re.compile(r'(?<=", line )\d+'), "<n>"),
    # A place in source named as `path:line` (where a function was defined, a log record's origin): the author ran
    # the page from their docs' file, the reader from theirs. Code typed at a prompt has a place the interpreter
    # names (`<stdin>:3`, the runner's `<doctest page.md[2]>:3` under the folder it ran in), masked first: the
    # runner's name holds the page's file name.
    (re.compile(r"(?:[\w.-]*/)*<(?:stdin|string|doctest [^<>\n]*)>:\d+\b"), "<place>"),
    (re.compile(r"[\w./-]*\.(?:py|md|rst|ipynb):\d+\b"), "<place>"),
    # A log record's origin as `module:function:line` (`__main__:nested:10`): the line is in the author's file.
    (re.compile(r"(?<![\w.:])([A-Za-z_][\w.]*:(?:<\w+>|[A-Za-z_]\w*)):\d+\b"), r"\1:<n>"),
    # The reader's code runs in `__main__`; Sphinx's doctest runs without a module name and other docs test runners
    # name the module after themselves (`__test__`), so the reprs a page shows lack the reader's `__main__.` or
    # carry another dunder module in its place.
    (re.compile(r"(?<![\w.])__[a-z]+__\."), ""),
]
ADDRESS_SHOWN = re.compile(r"[ \t]?<addr>")
URL_VERSION = re.compile(r"(https?://[^\s/]+(?:/[^\s/]+)*?/)v?\d+(?:\.\d+)*(?=/)")


def compare(expected: str, actual: str) -> Match:
    expected, actual = _as_seen(expected, actual)
    if _same(expected, actual):
        return "same"
    if _same(_masked(expected), _masked(actual)):
        return "format"
    return "different"


def _as_seen(expected: str, actual: str) -> tuple[str, str]:
    """Both texts as the reader sees them: no terminal colour codes (invisible: what they see is the text), and
    the shown output without the author's notes."""
    actual = strip_ansi(actual)
    expected = BLANK_LINE.sub("", strip_ansi(expected))
    return _without_notes(expected, actual), actual


# doctest's marker for a blank line of output: what the reader sees is the blank line.
BLANK_LINE = re.compile(r"^[ \t]*<BLANKLINE>[ \t]*$", re.MULTILINE)


def _without_notes(expected: str, actual: str) -> str:
    """The shown output without the author's Python comments in it (`# no output`, `# the answer:`): notes to the
    reader, not output. A `#` line the example did print is output."""
    printed = {line.strip() for line in actual.splitlines()}
    return "\n".join(
        _without_trailing_note(line, printed)
        for line in expected.splitlines()
        if not line.lstrip().startswith("#") or line.strip() in printed
    )


def _without_trailing_note(line: str, printed: set[str]) -> str:
    """`False  # Hmm?`: a note after the value, two spaces and a `#` away; kept when that is what was printed."""
    value, marker, _ = line.partition("  #")
    return value.rstrip() if marker and line.strip() not in printed and value.strip() else line


def _same(expected: str, actual: str) -> bool:
    want, got = _lines(expected), _lines(actual)
    if _checker.check_output(want, got, FLAGS):
        return True
    if _pattern(_compact(want)).fullmatch(_compact(got)) is not None:
        return True
    return _same_value(want, got)


# What ast.literal_eval raises on text that is no literal, or one too big or deep to build.
NOT_A_LITERAL = (ValueError, SyntaxError, TypeError, MemoryError, RecursionError)


def _same_value(want: str, got: str) -> bool:
    """One Python value shown both times (a dict, a list), equal as values: its keys in another order, its
    strings quoted otherwise, laid out on more lines."""
    try:
        shown, printed = ast.literal_eval(want.strip()), ast.literal_eval(got.strip())
    except NOT_A_LITERAL:
        return False
    return isinstance(shown, (dict, list, tuple, set)) and shown == printed


def _lines(text: str) -> str:
    """Trailing spaces and blank lines at either end mean nothing to a reader."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


def _compact(text: str) -> str:
    """Layout removed: no whitespace, no trailing comma before a closing bracket (a pretty-printer's)."""
    text = re.sub(r"\s+", "", text)
    text = re.sub(r",(?=[)\]}])", "", text)
    return URL_VERSION.sub(lambda m: m.group(1) + "<v>", text)


def _pattern(compact_want: str) -> re.Pattern:
    """The expected text with `...` matching anything, as doctest's ELLIPSIS does."""
    parts = [re.escape(part) for part in compact_want.split("...")]
    return re.compile(".*?".join(parts), re.DOTALL)


# A traceback's stack (or a stack logging or traceback.print_stack dumps), between its header and what follows:
# as with doctest, the exception is what is shown; the frames are the machine and the version that ran it.
STACK = re.compile(r"^((?:Traceback|Stack) \(most recent call last\):\n)(?:[ \t]+.*\n?)+", re.MULTILINE)


# A class is shown by its name as often as by its repr: `type=int` where Python prints `type=<class 'int'>`.
CLASS_REPR = re.compile(r"<class '([\w.]+)'>")


def _frames_left_out(text: str) -> str:
    return STACK.sub(r"\1  ...\n", text)


# A start tag of XML or HTML with its attributes: their order means nothing to either (parsers, and libraries
# that build a tag from a dict, may give them in any order).
START_TAG = re.compile(r"<([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+=(?:\"[^\"]*\"|'[^']*'))+)(\s*/?)>")
ATTRIBUTE = re.compile(r"[\w:.-]+=(?:\"[^\"]*\"|'[^']*')")


def _attributes_sorted(text: str) -> str:
    return START_TAG.sub(lambda m: f"<{m[1]} {' '.join(sorted(ATTRIBUTE.findall(m[2])))}{m[3]}>", text)


def _masked(text: str) -> str:
    text = _attributes_sorted(_frames_left_out(text))
    text = masked(text, MASKS)
    text = URL_VERSION.sub(lambda m: m.group(1) + "<v>", text)
    text = CLASS_REPR.sub(r"\1", text)
    text = ADDRESS_SHOWN.sub("", text)  # a page may leave a repr's address out (`<Player` for `<Player 0x7fe4…`)
    return text.replace("'", "").replace('"', "")  # how a value is quoted is presentation


def same_lines_in_another_order(expected: str, actual: str) -> bool:
    """The printed lines are the page's, each as often, only in another order (values that change from run to
    run masked)."""
    expected, actual = _as_seen(expected, actual)
    want, got = (
        sorted(line.strip() for line in _masked(text).split("\n") if line.strip()) for text in (expected, actual)
    )
    return bool(want) and want == got


def differing_line(expected: str, actual: str) -> tuple[str, str] | None:
    """The first line where the two differ (after layout), to show a reader where to look."""
    expected, actual = (_frames_left_out(text) for text in _as_seen(expected, actual))
    want = [line.strip() for line in _lines(expected).split("\n") if line.strip()]
    got = [line.strip() for line in _lines(actual).split("\n") if line.strip()]
    for index in range(max(len(want), len(got))):
        shown = want[index] if index < len(want) else "(nothing)"
        printed = got[index] if index < len(got) else "(nothing)"
        if shown == "...":
            return None
        if not _same(shown, printed) and not _same(_masked(shown), _masked(printed)):
            return shown, printed
    return None


# The borders of a panel or table a terminal library draws to the terminal's width: the page's were drawn at
# its author's width, so only the text inside them is compared.
BOX_DRAWING = re.compile(r"[\u2500-\u257f]+")


def missing_lines(expected: str, actual: str) -> list[str]:
    """The lines a command's documented output shows that its output lacks. Docs often show only part of a
    command's output, so each shown line is looked for anywhere; values that change from run to run are masked,
    version numbers are not (an outdated version is what this is for). Box borders are left out (see
    BOX_DRAWING)."""
    printed = _masked(re.sub(r"\s+", " ", BOX_DRAWING.sub(" ", strip_ansi(actual))))
    missing = []
    for line in strip_ansi(expected).splitlines():
        shown = re.sub(r"\s+", " ", BOX_DRAWING.sub(" ", line).strip())
        if not shown or shown in ("...", "…"):
            continue
        parts = [part.strip() for part in re.split(r"\.\.\.|…", _masked(shown)) if part.strip()]
        if not all(part in printed for part in parts):
            missing.append(line.strip())
    return missing


WORD_OR_SIGN = re.compile(r"\w+|[^\w\s'\"]")
# A run of numbers and what joins them (`2024, 7, 4, 10, 36`, `10:36:56.123`): one value, however many parts it
# shows (a time gains its microseconds when they are not 0).
NUMBERS = re.compile(r"(?<!\w)\d+(?:\s*[,.:-]\s*\d+)*(?!\w)")


def form_shown(expected: str, runs: list[str]) -> bool:
    """A value that changes from run to run, shown in the form the runs give it: what the runs printed in common
    (every word and sign each run shares, runs of numbers aside: the clock and counters move them) is all in what
    the page shows, in order. A datetime the runs give with a time zone, which the page's lacks, is a value of
    another form."""
    expected, _ = _as_seen(expected, "")
    if "..." in expected or "…" in expected:
        return True  # the page leaves part of the value out
    tokens = [WORD_OR_SIGN.findall(NUMBERS.sub("0", strip_ansi(run))) for run in runs]
    common = tokens[0]
    for other in tokens[1:]:
        matcher = difflib.SequenceMatcher(None, common, other, autojunk=False)
        common = [token for block in matcher.get_matching_blocks() for token in common[block.a : block.a + block.size]]
    shared = iter(WORD_OR_SIGN.findall(NUMBERS.sub("0", expected)))
    return all(token in shared for token in common)
