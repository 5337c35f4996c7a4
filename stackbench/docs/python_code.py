"""What a Python example is, read from its text and syntax tree: a script or a doctest session, a program or an
excerpt, what it leaves the reader to fill in, what it says it prints, the names it uses and defines, and which
earlier examples it builds on."""

import ast
import builtins
import codeop
import doctest
import io
import itertools
import keyword
import mimetypes
import re
import textwrap
import tokenize
import typing
import warnings
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from stackbench.docs.page_blocks import indent_of
from stackbench.lib.output_compare import NOT_A_LITERAL

BUILTIN_NAMES = set(dir(builtins)) | {"__name__", "__file__", "__doc__", "__builtins__", "__spec__", "__loader__"}
PARSE_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
PROMPT = re.compile(r"^\s*>>>( |$)", re.MULTILINE)
# Values a reader must put in themselves: <your-key>, <API_KEY>, "YOUR_API_KEY", "your-api-token", REPLACE_ME, the
# last part of a dotted name written as what goes there ("shapes.<kind>"; a route's "/<kind>" is the framework's).
# A "your-secret-key" or "your-password" written plainly is a value like any other to code that signs or hashes
# with it: it runs as shown (where a service refuses it, that failure says the reader's environment is needed).
FILL_IN = re.compile(
    r"<\s*(?:your|my)[\w .-]*>|<[A-Z][A-Z0-9_]{2,}>|\bYOUR_[A-Z0-9_]+\b|\byour[-_](?:own[-_])?(?:api[-_])?"
    r"(?:key|token|id|username|user|email|host|url|project|bucket|account)\b|\bREPLACE_ME\b|\bCHANGEME\b|"
    r"(?<=\w\.)<[a-z][\w-]*>"
)
# A path standing for one of the reader's own ("path/to/template", "/path/to/data.csv", "path_to_file/conf.toml"):
# the code around it runs as shown, what reads that path needs the reader's files.
PLACEHOLDER_PATH = re.compile(r"""["'](/?path(?:/to/|_to_\w*/)[^"']*)["']""")


def placeholder_path(code: str) -> str | None:
    """The first path in code that stands for one of the reader's own, if any."""
    match = PLACEHOLDER_PATH.search(code)
    return match.group(1) if match else None


# A word in a string that stands for the reader's own thing by its name: `"my_table"`, `"mydb.db"`, `'your-bucket'`,
# `"foo"`. Glued to a lowercase word (`mydb`), only a noun of the things a reader owns: `mypy` is a tool.
STAND_IN_WORD = re.compile(
    r"(?:[mM]y|[yY]our|[sS]ome)(?:[_-][A-Za-z0-9]|[A-Z0-9]|(?:db|database|table|file|app|project|bucket|data|model|"
    r"module|package|service|server|host|user|key|secret|token|dir|folder|path|site|index|queue|topic|repo|schema|"
    r"collection|dialect|dataset|domain|org|company|team|class|func|function|api)(?![a-z]))[\w-]*"
    r"|(?:foo|bar|baz|qux|quux|spam|eggs)\d*"
)


def stand_in_values(tree: ast.Module) -> list[str]:
    """The words of the code's string literals that stand for the reader's own things (a table, a database, a
    dialect of theirs), each once."""
    strings = (node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str))
    words = (word for text in strings for word in re.findall(r"[A-Za-z_][\w-]*", text))
    return list(dict.fromkeys(word for word in words if STAND_IN_WORD.fullmatch(word)))


# A string that could name a module, dotted or not ("django", "django.forms.models"): what a tool that works on a
# package by its name is handed.
MODULE_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def string_names(tree: ast.Module, role: typing.Literal["handed", "looked_up"]) -> list[str]:
    """The string literals of the code that could name a module, each once, in a role: handed to a call
    (`DSM("django")`), as a tool is handed the package it is to work on, or looked up in what something made of
    one (`dsm["contrib.auth"]`). A string handed to a call as a file name or a field's name is no lookup."""
    nodes = list(ast.walk(tree))
    if role == "handed":
        calls = [node for node in nodes if isinstance(node, ast.Call)]
        values = [value for call in calls for value in [*call.args, *(k.value for k in call.keywords)]]
    else:
        values = [node.slice for node in nodes if isinstance(node, ast.Subscript)]
    strings = (node.value for node in values if isinstance(node, ast.Constant) and isinstance(node.value, str))
    return list(
        dict.fromkeys(s for s in strings if MODULE_NAME.fullmatch(s) and not keyword.iskeyword(s) and not _file_name(s))
    )


# Data and configuration files mimetypes does not know by their suffix.
DATA_FILE_SUFFIXES = {".yaml", ".yml", ".toml", ".ini", ".cfg", ".env", ".lock", ".log", ".jsonl", ".parquet", ".db"}


def _file_name(text: str) -> bool:
    """`capital.resource.yaml`, `table.csv`: dotted like a module's name, but a file's, by its suffix."""
    return mimetypes.guess_type(text)[0] is not None or PurePosixPath(text).suffix.lower() in DATA_FILE_SUFFIXES


# Calls where `...` is a real value, not a gap: pydantic's and FastAPI's "required" marker.
ELLIPSIS_AS_VALUE = {
    "Field",
    "Body",
    "Query",
    "Path",
    "Header",
    "Cookie",
    "Form",
    "File",
    "Depends",
    "Security",
    "PrivateAttr",
    "Parameter",
    "Argument",
    "Option",
}
OUTPUT_COMMENT = re.compile(r"^\s*#>\s?(.*)$")
# An exception named the way docs name them (a warning is no exception: it does not stop the code).
EXCEPTION_NAME = r"[A-Z]\w{0,80}(?:Error|Exception|Exit|Interrupt|Group|Invalid|Failure|Fault)"
# A comment saying its line fails: "# raises TypeError", "# TypeError: ...", "# -> ValueError", "# error!", "# fails".
RAISES_COMMENT = re.compile(
    r"^#\s*(?:(?:->|=>|→)\s*)?(?:"
    r"(?i:(?:this\s+)?(?:will\s+|would\s+|should\s+)?(?:raises?|throws?|fails?|errors?(?:\s+out)?))"
    r"(?:\s+(?i:with\s+)?(?:an?\s+)?`?(?P<named>[A-Z]\w{0,99})`?\b.*|\s+(?i:an?\s+(?:error|exception))\b.*|"
    r"\s*(?:[.!:(].*)?$)|"
    # "# does not work!", "# won't work": the line fails
    r"(?i:(?:this\s+|it\s+)?(?:does\s*n[o']t|won't|will\s+not|would\s*n[o']t)\s+work)\s*[.!]*\s*$|"
    rf"`?(?P<shown>{EXCEPTION_NAME})`?\s*(?:[:!(].*)?$|"
    # "# error!", "# immediate error", "# runtime error"
    r"(?i:(?:an?\s+)?(?:(?:immediate|instant|runtime|fatal|validation|expected)\s+)?error)\s*!*\s*$|"
    # "# the reader's call: immediate error", "# calling it now: TypeError"
    rf".*:\s*(?:(?i:(?:an?\s+)?(?:immediate\s+)?(?:error|exception|failure))|(?P<late>{EXCEPTION_NAME}))\s*!*\s*$|"
    # "# looks X up, raises KeyError as ...", "# While here it will raise `ModuleNotFoundError`." (said_to_raise
    # reads the words before the verb for a negation: "never raises KeyError" says the opposite)
    r"(?P<lead>.*?)\b(?i:(?:will\s+|would\s+|should\s+)?(?:raises?|throws?))\s+"
    rf"(?:(?i:an?\s+)?`?(?P<told>{EXCEPTION_NAME})`?\b|(?i:an?\s+(?:error|exception))\b)(?P<rest>.*))"
)
# Words after the exception that make the comment a condition ("raises KeyError if the key is missing"), not a
# statement that this line raises.
CONDITION = re.compile(r"^\W*(?:if|when|whenever|unless|in\s+case|on)\b", re.IGNORECASE)
# A sentence introducing a block that fails: "This fails immediately:", "Passing a string raises a `TypeError`:".
RAISES_INTRO = re.compile(
    # ("throw in" is "add": "you can throw in some extra functionality:")
    r"\b(?:fails?|raises?|throws?(?!\s+in\b)|will\s+(?:fail|raise|throw(?!\s+in\b))|results?\s+in\s+an?\s+(?:error|exception)|"
    r"errors?\s+out)\b[^:]*:\s*$",
    re.IGNORECASE,
)
# A sentence that opens on the verb tells the reader what to do ("Fail fast instead with `blocking=False`:"): it
# says what the code makes happen, not that the block stops with an error.
INSTRUCTION = re.compile(r"^\W*(?:fail|raise|throw)\b", re.IGNORECASE)
NEGATED = re.compile(r"\b(?:not|never|no\s+longer|without)\b|n't\b", re.IGNORECASE)
# Words before "will raise" that make it about other code, later ("any attempt to modify it will raise TypeError",
# "trying to set it raises"): what the object does from now on, not what this line does.
HYPOTHETICAL = re.compile(
    r"\b(?:any|every|each|further|later|subsequent)\s+(?:attempts?|calls?|changes?|writes?|access(?:es)?|uses?)\b|"
    r"\b(?:trying|attempting|attempts?)\s+to\b|\b(?:if|when(?:ever)?|unless|otherwise|afterwards?|from\s+now\s+on)\b",
    re.IGNORECASE,
)


# The last line of a traceback: the exception's (dotted) class and its message, if it has one.
ERROR_LINE = re.compile(r"^(?:[a-z_]\w*\.)*(?P<name>[A-Z]\w{0,80})(?:: \S|$)")


# Python's header, or IPython's (`NameError     Traceback (most recent call last)`).
TRACEBACK_HEADER = re.compile(r"^(?:[A-Za-z_][\w.]*\s+)?Traceback \(most recent call last\)")


def shown_error(code: str) -> str | None:
    """The exception a block that is no Python shows (a traceback, or only its last line, the way a page shows
    "you get an error"): the class's own name; None for anything else."""
    tree = parse(code)
    lines = [line for line in code.strip().splitlines() if line.strip()]
    # `pkg.BadSide: side -1 is not positive` parses, as an annotation no one would write alone in a block.
    annotation = tree.body[0] if tree is not None and len(tree.body) == 1 else None
    if tree is not None and not (
        isinstance(annotation, ast.AnnAssign)
        and annotation.value is None
        and not isinstance(annotation.annotation, (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.BinOp))
    ):
        return None
    if not lines or not (len(lines) == 1 or TRACEBACK_HEADER.search(lines[0])):
        return None
    match = ERROR_LINE.match(lines[-1].strip())
    return match.group("name") if match else None


def parse(code: str) -> ast.Module | None:
    try:
        return compile(code, "<example>", "exec", flags=PARSE_FLAGS)
    except (SyntaxError, ValueError):
        return None


COLUMN_PROMPT = re.compile(r"^>>>( |$)")


def session_parts(text: str) -> tuple[str, str] | None:
    """(code before the prompts, the session) of a doctest session: a block whose first line of code is a `>>>`
    prompt, or that starts with a definition the reader types as is and goes on at prompts (both appear in
    real docs). None for anything else: a program whose docstrings hold doctests is a program."""
    lines = text.split("\n")
    first = next((n for n, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None:
        return None
    if PROMPT.match(lines[first]):
        return "", _output_blank_lines_kept(text)
    prompt = next((n for n, line in enumerate(lines) if COLUMN_PROMPT.match(line)), None)
    if prompt is None:
        return None
    prefix = "\n".join(lines[:prompt])
    session = _output_blank_lines_kept("\n".join(lines[prompt:]))
    if parse(prefix) is None or values_shown_at_prompts(text) is not None:
        return None
    return prefix, session


def _output_blank_lines_kept(session: str) -> str:
    """A blank line inside what a statement printed (a chained traceback's, an ASCII picture's first line) is
    part of the output the page shows: doctest would end the output there and read the rest as prose, but in a
    code block nothing is prose. Each blank line followed, before the next prompt, by more output becomes
    doctest's `<BLANKLINE>`; blank lines before a prompt or at the end still end an output."""
    lines = session.split("\n")
    seen_prompt = False
    for number, line in enumerate(lines):
        if PROMPT.match(line):
            seen_prompt = True
        if line.strip() or not seen_prompt:
            continue
        after = next((later for later in lines[number + 1 :] if later.strip()), None)
        if after is None or PROMPT.match(after):
            continue
        prompt = next(earlier for earlier in reversed(lines[:number]) if PROMPT.match(earlier))
        lines[number] = prompt[: len(prompt) - len(prompt.lstrip())] + doctest.BLANKLINE_MARKER
    return "\n".join(lines)


def values_shown_at_prompts(text: str) -> str | None:
    """Script lines with what they give shown under them at prompts (`lump.state` over `>>> 'solid'`): a literal
    nobody types at a prompt to run it, the author's notation for the value or the printed line. The code with
    each such prompt turned into a comment under its statement (`# => 'solid'`), read as the value the page shows;
    None for anything else (a session, which starts at a prompt; prompts that type code)."""
    lines = text.split("\n")
    first = next((n for n, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")), None)
    if first is None or SESSION_PROMPT.match(lines[first]):
        return None
    prompts = [(n, m) for n, line in enumerate(lines) if (m := SESSION_PROMPT.match(line)) and m.group(2) == ">>>"]
    # A `...` line under a prompt goes on with what it types; anywhere else it is code the page leaves out.
    continued = any(n + 1 < len(lines) and lines[n + 1].lstrip().startswith("...") for n, _ in prompts)
    if not prompts or continued or not all(_literal(match.group(3) or "") for _, match in prompts):
        return None
    for n, match in prompts:
        lines[n] = f"{match.group(1)}# => {(match.group(3) or '').strip()}"
    code = "\n".join(lines)
    return code if parse(code) is not None else None


def _literal(text: str) -> bool:
    try:
        ast.literal_eval(ast.parse(text.strip(), mode="eval").body)
    except NOT_A_LITERAL:
        return False
    return True


def is_session(text: str) -> bool:
    """A doctest session: the reader types at `>>>` prompts and sees the output below them."""
    return session_parts(text) is not None


def _typed_statements(text: str) -> tuple[str, list[doctest.Example] | None]:
    """What comes before a session's prompts, and the statements typed at them (None when doctest cannot read
    them)."""
    prefix, session = session_parts(text) or ("", text)
    try:
        return prefix, doctest.DocTestParser().get_examples(session)
    except ValueError:
        return prefix, None


def session_source(text: str) -> str:
    """The code a session runs: what comes before its prompts, then what is typed at them."""
    prefix, examples = _typed_statements(text)
    if examples is None:
        return prefix
    return prefix.rstrip("\n") + ("\n" if prefix.strip() else "") + "".join(example.source for example in examples)


def defined_by(code: str) -> set[str]:
    """Names a piece of code defines (none when it does not parse)."""
    tree = parse(code)
    return defined_names(tree) if tree is not None else set()


def statements_that_parse(text: str) -> ast.Module:
    """A session's statements that parse, as one module: what it types, less a line the page mistyped (a value
    shown at a prompt, `>>> <Thing 1>`)."""
    trees = [parse(example.source) for example in _typed_statements(text)[1] or []]
    return ast.Module(body=[node for tree in trees if tree is not None for node in tree.body], type_ignores=[])


# A prompt typed without its space (`>>>res.unwrap()`): the interpreter's reader types the statement after it
# all the same; only doctest's parser refuses it.
UNSPACED_PROMPT = re.compile(r"^(\s*)>>>(?=[^\s>])", re.MULTILINE)


def prompts_spaced(text: str) -> str:
    return UNSPACED_PROMPT.sub(r"\1>>> ", text)


SESSION_PROMPT = re.compile(r"^(\s*)(>>>|\.\.\.)(?: (.*)|$)")


def continuations_prompted(text: str) -> str:
    """A session whose statement goes on over lines the author left without the `... ` prompt (the arguments of
    a call split over lines) or typed with `>>>` (an indented body line): the reader types those lines as the
    rest of the statement, where the interpreter is still waiting for it; they get the `... ` prompt."""
    lines, pending, margin = text.split("\n"), list[str](), ""
    for number, line in enumerate(lines):
        prompt = SESSION_PROMPT.match(line)
        body = (prompt.group(3) or "") if prompt else ""
        if prompt and prompt.group(2) == "...":
            pending.append(body)
        elif prompt and pending and body.strip() and (body[:1].isspace() or _needs_more(pending)):
            lines[number] = f"{prompt.group(1)}... {body}"
            pending.append(body)
        elif prompt:
            pending, margin = ([body] if body.strip() else []), prompt.group(1)
        elif pending and line.strip() and _needs_more(pending):
            body = line[len(margin) :] if line.startswith(margin) else line.lstrip()
            lines[number] = f"{margin}... {body}"
            pending.append(body)
        else:
            pending = []
    return "\n".join(lines)


# Statements that show nothing at a prompt: what an author pastes among prompts as a script's lines.
DEFINITIONS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


def definitions_prompted(text: str) -> str:
    """A session whose author pasted definitions without prompts (a decorated class, a function) after a statement
    that shows nothing (an import, a bare `>>>`): no output can be shown there, and the reader types those lines
    too. Each of their statements gets `>>> `, its further lines `... `."""
    lines, prompted, statement, margin, number = text.split("\n"), list[str](), list[str](), "", 0
    while number < len(lines):
        prompt = SESSION_PROMPT.match(lines[number])
        if prompt:
            if prompt.group(2) == ">>>":
                statement, margin = [], prompt.group(1)
            statement.append(prompt.group(3) or "")
            prompted.append(lines[number])
            number += 1
            continue
        end = next((n for n in range(number, len(lines)) if SESSION_PROMPT.match(lines[n])), len(lines))
        run = lines[number:end]
        prompted += _typed_definitions(run, statement, margin) or run
        number = end
    return "\n".join(prompted)


def _typed_definitions(run: list[str], statement: list[str], margin: str) -> list[str] | None:
    """The run of unprompted lines with prompts, when it is definitions after a statement that shows nothing."""
    typed = parse(textwrap.dedent("\n".join(statement)))
    if typed is None or not all(isinstance(node, DEFINITIONS) for node in typed.body):
        return None
    start = next((n for n, line in enumerate(run) if line.strip()), None)
    if start is None:
        return None
    body = textwrap.dedent("\n".join(run[start:])).split("\n")
    tree = parse("\n".join(body))
    if tree is None or not tree.body or not all(isinstance(node, DEFINITIONS) for node in tree.body):
        return None
    firsts = {min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) for node in tree.body}
    inside = {n for node in tree.body for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    typed_lines = run[:start]
    for n, line in enumerate(body, 1):
        if n in firsts:
            typed_lines.append(f"{margin}>>> {line}")
        elif n in inside or line.strip():
            typed_lines.append(f"{margin}... {line}".rstrip())
        else:
            typed_lines.append(line)
    return typed_lines


def _needs_more(statement: list[str]) -> bool:
    """The interpreter still waits for the rest of the statement (an open bracket, a header with no body)."""
    compiler = codeop.CommandCompiler()
    compiler.compiler.flags |= ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return compiler("\n".join(statement) + "\n") is None
        except (SyntaxError, ValueError, OverflowError):
            return False


def session_statements(text: str) -> int:
    prefix, session = session_parts(text) or ("", text)
    try:
        return len(doctest.DocTestParser().get_examples(session))
    except ValueError:
        return 0


ANY_PROMPT = re.compile(r"^\s*>>>")


def prompt_line(code: str) -> int | None:
    """The first line (1-based) of a `>>>` prompt in code that is not a session: script lines and prompts
    mixed, which a reader can paste neither into a file nor at the interpreter."""
    return next((number for number, line in enumerate(code.split("\n"), 1) if ANY_PROMPT.match(line)), None)


def reads_as_code(shown: str, statement: str) -> bool:
    """Text shown as the output of a statement typed at a prompt that is code: a script line among the prompts.
    After a statement that gives no value (an import, an assignment) any code is; after an expression only a
    program is (a lone call, `Point(x=1)`, is how values are shown)."""
    tree, typed = parse(shown), parse(statement)
    if tree is None:
        return False
    gives_value = typed is None or any(isinstance(node, ast.Expr) for node in typed.body)
    return is_program(tree) if gives_value else looks_like_program(tree)


# Syntax of Pythons newer than the reader's may be: PEP 695's type aliases and generic classes and functions.
NEWER_SYNTAX = [
    (re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*(\[[^\]]*\])?\s*=", re.MULTILINE), "3.12", "a `type` alias (PEP 695)"),
    (re.compile(r"^\s*(?:async\s+)?(?:class|def)\s+[A-Za-z_]\w*\[", re.MULTILINE), "3.12", "type parameters (PEP 695)"),
]


def newer_syntax(code: str) -> tuple[str, str] | None:
    """(Python version, what) when the code uses syntax that only newer Pythons have."""
    for pattern, version, what in NEWER_SYNTAX:
        if pattern.search(code):
            return version, what
    return None


SIGNATURES_LISTED = "signatures listed for reference (parameters, their types and defaults, no body to run)"


def fragment(code: str) -> str | None:
    """Why code is a fragment shown for its shape, not a program: decorators shown without the function they go
    on, signatures listed for reference, or a header (`if`, `with`…) quoted without its body."""
    if signatures_only(code):
        return SIGNATURES_LISTED
    if parse(code) is not None or not code.strip():
        return None
    if parse(code.rstrip() + "\ndef _decorated(): pass\n") is not None:
        return "decorators shown without the function they decorate"
    last = code.rstrip().split("\n")[-1]
    if last.endswith(":") and parse(code.rstrip() + "\n" + " " * (indent_of(last) + 4) + "pass\n") is not None:
        return "a header shown without its body"
    return None


# One signature as an API reference shows it: a `def` or `class` line, a decorator or a call, its parameters in
# parentheses (types and defaults allowed), maybe a return type, maybe the `:` of a header with no body under it.
SIGNATURE = re.compile(
    r"^(?:@\s*|(?:async\s+)?(?:def|class)\s+)?(?P<name>[A-Za-z_][\w.]*)\s*\((?P<parameters>.*)\)\s*"
    r"(?:->\s*(?P<returns>.+?))?\s*:?\s*$",
    re.DOTALL,
)
# A type a reference writes in angle brackets (`-> <Fixture>`, `Tuple[<Fixture>, ...]`): the kind of object, by name.
NAMED_KIND = re.compile(r"<\s*([A-Za-z_][\w.]*)\s*>")


def signatures_only(code: str) -> bool:
    """The block lists signatures for reference, the way an API page shows them, not code to run: every statement
    (imports and type aliases aside) is a signature with no body (`def has_tag(name: str)`, a header ending in `:`,
    a call whose parameters carry their types, `-> <Fixture>` for what it returns) or a function whose body is only
    `...` or a docstring, which nothing in the block calls or decorates. A function the block goes on to use, or a
    header with a comment under it (a body left for the reader to write), is code."""
    tree = parse(code)
    if tree is not None:
        stubs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        others = [n for n in tree.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return (
            bool(stubs)
            and all(not n.decorator_list and _only_ellipsis(n.body) and n.name not in used for n in stubs)
            and all(_import_or_alias(n) for n in others)
        )
    lines = _logical_lines(code)
    if not lines:
        return False
    signatures = 0
    for line in lines:
        if _signature_stub(line) is not None:
            signatures += 1
            continue
        statement = parse(line)
        if statement is None or not all(_import_or_alias(n) or _only_ellipsis([n]) for n in statement.body):
            return False
    return signatures > 0


@dataclass(frozen=True)
class ListedParameter:
    name: str
    kind: str  # inspect.Parameter's kind, by name: POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL...
    has_default: bool


@dataclass(frozen=True)
class ListedSignature:
    """One signature a reference lists: the name the reader calls (dotted when the page qualifies it) and the
    parameters it says that takes."""

    name: str
    parameters: tuple[ListedParameter, ...]

    @property
    def is_method(self) -> bool:
        """Listed with `self` or `cls` first: a method, found on a class, not in a module."""
        return bool(self.parameters) and self.parameters[0].name in ("self", "cls")

    @property
    def is_hook(self) -> bool:
        """Named with double underscores on both sides (`__getattr__`, `__init__`): a hook Python calls on the
        reader's class or module, which they write; no library exports it for them to call."""
        name = self.name.rsplit(".", 1)[-1]
        return len(name) > 4 and name.startswith("__") and name.endswith("__")


def listed_signatures(code: str) -> list[ListedSignature]:
    """The signatures of a block that lists them for reference (see signatures_only), in order; [] for any other
    block."""
    if not signatures_only(code):
        return []
    tree = parse(code)
    if tree is not None:
        return [
            ListedSignature(node.name, _listed_parameters(node.args))
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
    listed = []
    for line in _logical_lines(code) or []:
        found = _signature_stub(line)
        if found is not None:
            name, stub = found
            listed.append(ListedSignature(name, _listed_parameters(stub.args)))
    return listed


def _signature_stub(line: str) -> tuple[str, ast.FunctionDef] | None:
    """The name a line shows the signature of, and a stub function with its parameters and return type, when the
    line is one (`has_tag(name: str) -> bool`, a kind in angle brackets read as its name)."""
    match = SIGNATURE.match(NAMED_KIND.sub(r"\1", line))
    stub = parse(f"def _({match['parameters']}) -> {match['returns'] or 'None'}: pass") if match else None
    return (
        (match["name"], stub.body[0])
        if match and stub is not None and isinstance(stub.body[0], ast.FunctionDef)
        else None
    )


def _listed_parameters(arguments: ast.arguments) -> tuple[ListedParameter, ...]:
    positional = arguments.posonlyargs + arguments.args
    first_default = len(positional) - len(arguments.defaults)
    listed = [
        ListedParameter(
            argument.arg,
            "POSITIONAL_ONLY" if number < len(arguments.posonlyargs) else "POSITIONAL_OR_KEYWORD",
            number >= first_default,
        )
        for number, argument in enumerate(positional)
    ]
    if arguments.vararg:
        listed.append(ListedParameter(arguments.vararg.arg, "VAR_POSITIONAL", False))
    listed += [
        ListedParameter(argument.arg, "KEYWORD_ONLY", default is not None)
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    if arguments.kwarg:
        listed.append(ListedParameter(arguments.kwarg.arg, "VAR_KEYWORD", False))
    return tuple(listed)


def _import_or_alias(statement: ast.stmt) -> bool:
    """An import, or a name given to a type (`Handler = Callable[[str], None]`): what a list of signatures may
    hold besides them. An assignment that calls something makes an object: code."""
    if isinstance(statement, ast.Assign):
        return not any(isinstance(node, ast.Call) for node in ast.walk(statement.value))
    return isinstance(statement, (ast.Import, ast.ImportFrom))


def _logical_lines(code: str) -> list[str] | None:
    """The code's logical lines (brackets joined, comments left out), a line that opens on `->` joined to the one
    before it (a return type shown under its signature); None when a comment stands on a line of its own indented
    under a statement (a body left for the reader to write), or the code does not tokenize."""
    skipped = {tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.COMMENT}
    lines: list[str] = []
    words: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.COMMENT and token.line.strip().startswith("#") and token.start[1] > 0:
                return None
            if token.type == tokenize.NEWLINE:
                joined = " ".join(words)
                if joined.startswith("->") and lines:
                    lines[-1] += " " + joined
                elif joined:
                    lines.append(joined)
                words = []
            elif token.type not in skipped:
                words.append(token.string)
    except (tokenize.TokenError, SyntaxError):
        return None
    return lines + ([" ".join(words)] if words else [])


def shifted_program(code: str) -> bool:
    """Code that does not parse as shown but is a program once the lines after its first lose the indentation
    they all have beyond it: a program the page shows with its first line out of step with the rest, which a
    reader copying it gets as an IndentationError."""
    lines = code.strip("\n").split("\n")
    rest = [line for line in lines[1:] if line.strip()]
    if parse(code) is not None or not rest or lines[0] != lines[0].lstrip():
        return False
    margin = min(len(line) - len(line.lstrip()) for line in rest)
    tree = parse("\n".join([lines[0], *(line[margin:] for line in lines[1:])]))
    return margin > 0 and tree is not None and is_program(tree)


# Statements only a program has (never a displayed value): imports, definitions, assignments, loops, handlers.
PROGRAM_STATEMENTS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.With,
    ast.AsyncWith,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.Raise,
    ast.Delete,
)


def is_displayed_value(tree: ast.Module) -> bool:
    """Code that is one value as Python displays it: a container, a comparison, a name, but no program and no
    lone call (`[Token(INT, 3)]` is a repr; `main()` is a run)."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr) or is_program(tree):
        return False
    return not isinstance(tree.body[0].value, (ast.Call, ast.Await))


# What code needs: brackets, an assignment or a header's colon, quotes; a decorator, a shell escape or a magic.
CODE_PUNCTUATION = re.compile(r"[()\[\]{}=:'\"]|^\s*[@!%]", re.MULTILINE)


def printed_text(code: str) -> bool:
    """Text that is no Python and has none of code's punctuation or line marks: a table or printed words."""
    return bool(code.strip()) and parse(code) is None and not CODE_PUNCTUATION.search(code)


def is_literal_value(tree: ast.Module) -> bool:
    """Code that is one displayed container of plain values (a dict, list, tuple or set of literals), nothing else."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return False
    value = tree.body[0].value
    if not isinstance(value, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        return False
    try:
        ast.literal_eval(value)
    except (ValueError, TypeError):  # a name or call inside it; an unhashable key (`{[1]: 2}`)
        return False
    return True


def is_program(tree: ast.Module) -> bool:
    """Code that is a program, not a displayed value: it imports, defines, assigns, loops or holds more than one
    statement. A lone call (`Point(x=1, y=2)`) is how output and signatures are shown, unless it passes both a
    name and a value in place (`load(Point, "1,2")`): a repr shows only values, a signature only names."""
    if any(isinstance(node, PROGRAM_STATEMENTS) for node in tree.body):
        return True
    calls = [n for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, (ast.Call, ast.Await))]
    if len(tree.body) == 1 and calls and isinstance(calls[0].value, ast.Call):
        return _passes_a_name_and_a_value(calls[0].value)
    return len(tree.body) > 1 and len(calls) == len(tree.body)


def _passes_a_name_and_a_value(call: ast.Call) -> bool:
    values = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.JoinedStr)
    names = any(isinstance(arg, ast.Name) for arg in call.args)
    given = any(
        (isinstance(arg, ast.Constant) and not isinstance(arg.value, (bool, type(None), type(...))))
        or isinstance(arg, values)
        for arg in call.args
    )
    return names and given


# `[settings]`, `[tool.isort]`, `["quoted.key"]`: a section header of an INI or TOML file.
SECTION_HEADER = re.compile(r"\[\[?(?:[\w.-]+|\"[^\"]+\")\]\]?")


def opens_with_section(code: str) -> bool:
    """Untagged text whose first line (comments aside) is a lone `[section]` header: a configuration file (INI,
    TOML), though `[settings]` and the `key=value` lines under it parse as Python."""
    lines = [line.strip() for line in code.split("\n") if line.strip() and not line.lstrip().startswith(("#", ";"))]
    return bool(lines) and SECTION_HEADER.fullmatch(lines[0]) is not None


def looks_like_program(tree: ast.Module) -> bool:
    """Code a reader would run, not a displayed value: it imports, defines, assigns, calls or controls flow."""
    runnable = (*PROGRAM_STATEMENTS, ast.If, ast.Assert)
    for node in tree.body:
        if isinstance(node, runnable):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Call, ast.Await)):
            return True
    return False


def fill_in(code: str) -> str | None:
    """A placeholder the reader replaces with their own value (an API key, a host), if the code has one."""
    match = FILL_IN.search(code)
    return match.group(0) if match else None


# A comment that says what a library makes of a value (`baz = ...  # interpreted as a check with no arguments`):
# the value is the point of the line, not a gap the reader fills.
VALUE_EXPLAINED = re.compile(r"#\s*(?:(?:is|are|gets?)\s+)?(?:interpreted|treated|taken|read)\s+as\b", re.IGNORECASE)


def ellipsis_gap(tree: ast.Module, code: str = "") -> int | None:
    """The line of a `...` standing for code or a value the reader supplies (`client = Client(...)`, `x = ...`,
    `columns = [...]`, `assert total == ...`), if any. Type hints (`tuple[int, ...]`), slices, stub bodies (`def f(): ...`),
    `Field(...)` and an assigned `...` whose comment in code says what the library makes of it are not gaps."""
    in_subscripts = {id(n) for node in ast.walk(tree) if isinstance(node, ast.Subscript) for n in ast.walk(node.slice)}
    explained = {line for line, comment in _comments(code) or [] if VALUE_EXPLAINED.match(comment)}
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and _is_ellipsis(node.value)
            and not (isinstance(node, ast.AnnAssign) and _in_class_body(tree, node))
            and node.lineno not in explained
        ):
            return node.lineno
        if (
            isinstance(node, ast.Call)
            and _callee(node) not in ELLIPSIS_AS_VALUE
            and (any(_is_ellipsis(arg) for arg in node.args) or any(_is_ellipsis(k.value) for k in node.keywords))
        ):
            return node.lineno
        if isinstance(node, (ast.List, ast.Set)) and any(_is_ellipsis(e) for e in node.elts):
            return node.lineno
        if isinstance(node, ast.Tuple) and id(node) not in in_subscripts and any(_is_ellipsis(e) for e in node.elts):
            return node.lineno
        if isinstance(node, ast.Dict) and any(_is_ellipsis(v) for v in node.values):
            return node.lineno
        if (
            isinstance(node, ast.Compare)
            and any(_is_ellipsis(operand) for operand in (node.left, *node.comparators))
            and not any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
        ):
            return node.lineno  # `assert total == ...`: the value the reader (or a tool) writes in
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_ellipsis(i.context_expr) for i in node.items):
            return node.lineno
        if isinstance(node, (ast.For, ast.AsyncFor, ast.If, ast.While)) and _is_ellipsis(
            getattr(node, "iter", None) or getattr(node, "test", None)
        ):
            return node.lineno
    return None


def body_excerpt(tree: ast.Module) -> int | None:
    """The line of a `yield` or `return` outside any function: lines from a function's body (an operation's
    `yield`s), shown without the function they belong to. Python refuses them at the top of a module."""
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Return)):
            return node.lineno
        if not isinstance(node, SCOPES):
            pending.extend(ast.iter_child_nodes(node))
    return None


def _syntax_error_line(code: str) -> int | None:
    """The line (1-based; 0 when Python names none) where code stops parsing; None when it parses, or cannot be
    compiled for another reason (a null byte)."""
    try:
        compile(code, "<example>", "exec", flags=PARSE_FLAGS)
    except SyntaxError as exc:
        return exc.lineno or 0
    except ValueError:
        return None
    return None


# Words in parentheses where code goes (`def check(function code here)`): prose standing for the reader's code.
PROSE_IN_PARENTHESES = re.compile(r"\(\s*([a-z]+(?: [a-z]+){2,})\s*\)")


def prose_gap(code: str) -> tuple[int, str] | None:
    """(line, words) of a phrase in parentheses that keeps code from parsing (`(function code here)`): three
    words or more, none a keyword of Python, which never puts names side by side."""
    failing = _syntax_error_line(code)
    if failing is None:
        return None
    lines = code.split("\n")
    match = PROSE_IN_PARENTHESES.search(lines[failing - 1]) if 0 < failing <= len(lines) else None
    if match is None or any(keyword.iskeyword(word) for word in match.group(1).split()):
        return None
    return failing, match.group(1)


# A single name in braces or angle brackets where code goes (`{var_name}: {type_hint} = {var_value}`, `<value>`):
# a template's slot for what the reader writes there. In a string (an f-string's `{x}`) it is the string's own.
TEMPLATE_SLOT = re.compile(r"\{\s*([A-Za-z_]\w*)\s*\}|<\s*([A-Za-z_]\w*)\s*>")


def _slots_filled(code: str) -> str:
    return TEMPLATE_SLOT.sub(lambda match: match.group(1) or match.group(2), code)


def template_slot(code: str) -> tuple[int, str] | None:
    """(line, slot) of a template's placeholder that keeps code from parsing (`{var_name}: {type_hint}`, Python
    allows no set as an annotation's target): the code parses once every slot is the name it holds, and the line
    Python stops at holds one. None for code that parses (a set literal, an f-string), or fails for another
    reason."""
    failing = _syntax_error_line(code)
    if failing is None:
        return None
    if parse(_slots_filled(code)) is None:
        return None
    lines = code.split("\n")
    slot = TEMPLATE_SLOT.search(lines[failing - 1]) if 0 < failing <= len(lines) else None
    return (failing, slot.group(0)) if slot else None


def left_out_code(tree: ast.Module) -> bool:
    """A block that opens on a lone `...`: the file's code before it is left out (the block edits a file the page
    built earlier), so what follows may use names only that code defines. (A `...` further down leaves out what
    comes after code that stands as shown.)"""
    return len(tree.body) > 1 and _is_ellipsis_statement(tree.body[0])


def code_left_out_above(tree: ast.Module, line: int) -> int | None:
    """The line of a lone `...` at the top of the block above `line`: code the page leaves out there (`machine =
    Machine(...)`, `...`, `machine.advance()`), which may make what the lines after it use."""
    return next(
        (
            node.lineno
            for node in tree.body
            if _is_ellipsis_statement(node) and node.end_lineno and node.end_lineno < line
        ),
        None,
    )


def class_body_excerpt(tree: ast.Module, indented: bool) -> bool:
    """A block of field declarations only (`name: Type`, `name: Type = default`): a class's body shown without its
    class, when one declares no value (a module has no use for a bare annotation) or the page indents them. A
    value after the colon (`NAME: {...}`, `port: 8000`) is no type: those are settings (see
    settings_with_colons)."""
    fields = [node for node in tree.body if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)]
    if not fields or len(fields) != len(tree.body) or settings_with_colons(tree):
        return False
    return indented or any(node.value is None for node in fields)


# What follows a colon in a settings listing and never in an annotation: a dict, a list, a set, a number, a bool.
SETTING_VALUES = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp)


def settings_with_colons(tree: ast.Module) -> tuple[str, int] | None:
    """(the name, its line) of a module-level `NAME: {...}` or `name: 8000` that assigns nothing: settings written
    the way YAML or a dict's entries are, where a settings module needs `=`. Python reads the value as the name's
    annotation and throws it away, so the module never defines the name its reader configures."""
    for node in tree.body:
        if not (isinstance(node, ast.AnnAssign) and node.value is None and isinstance(node.target, ast.Name)):
            continue
        value = node.annotation
        number = isinstance(value, ast.Constant) and isinstance(value.value, (int, float, bool))
        if isinstance(value, SETTING_VALUES) or number:
            return node.target.id, node.lineno
    return None


def is_sketch(tree: ast.Module) -> bool:
    """A block that only shows the shape of classes: every statement (imports aside) a class whose body is `...`
    (a docstring before it allowed): their fields are left out, the reader's own. (A function stub is whole: a
    route or a hook it registers works as shown, and so is an empty class a decorator the block imports
    registers.)"""
    definitions = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    return (
        bool(definitions)
        and all(isinstance(n, ast.ClassDef) and _only_ellipsis(n.body) for n in definitions)
        and not (
            imports_all_it_uses(tree) and any(isinstance(n, ast.ClassDef) and n.decorator_list for n in definitions)
        )
    )


def only_entries(tree: ast.Module) -> str | None:
    """The class a block only builds objects of, keeping none (`Route('/users', user)` alone, or a few such lines):
    entries shown for their shape, for the reader's own table or call. A program keeps what it builds."""
    calls = [n.value for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    if not calls or len(calls) != len(tree.body):
        return None
    names = [_callee(call) for call in calls]
    return names[0] if all(re.match(r"^_*[A-Z][a-z]", name) for name in names) else None


def elided_fields(tree: ast.Module) -> str | None:
    """The name of a decorated class (a data class, a model) whose body is only `...`: its fields are left out,
    so what the block does with it is shown for its shape. (An undecorated empty class, an exception or a marker,
    is whole, and so is one beside a decorated class whose fields the block declares, or in a block that imports
    all it uses: it has none by design.)"""
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    if imports_all_it_uses(tree) or any(
        isinstance(s, ast.AnnAssign) for node in classes if node.decorator_list for s in node.body
    ):
        return None
    for node in classes:
        if node.decorator_list and _only_ellipsis(node.body):
            return node.name
    return None


def imports_all_it_uses(tree: ast.Module) -> bool:
    """The block imports every name it uses that it does not define: written to be copied and run as it is, so
    an empty class in it is empty by design (registered, parsed, used as a marker). A shape shown for its own
    sake leaves its imports out."""
    imports = any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in tree.body)
    return imports and not undefined_names(tree)


def _only_ellipsis(body: list[ast.stmt]) -> bool:
    return _is_ellipsis_statement(body[-1]) and all(
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in body
    )


def _is_ellipsis_statement(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and _is_ellipsis(node.value)


# `...` (or `…`, `<...>`, or a longer run of dots, `.......`) where Python has no place for a value: a parameter
# list, a name, a statement part.
PSEUDO_ELLIPSIS = re.compile(r"<\s*(?:\.{3,}|…)\s*>|\.{3,}|…")
# `...` (or `..`) as an item of a list: a parameter list's "and so on" (`def f(a, b, ...):`).
ELLIPSIS_ITEM = re.compile(r",\s*(?:\.{2,3}|…)\s*(?=[,)\]}])")


def ellipsis_syntax_gap(code: str) -> int | None:
    """The line of a `...` that makes code that does not parse pseudo-code (`def handler(...):`, `<...>`, a `...`
    line among a list's entries, with no comma after it, `def f(a, b=1, ..., *args)`): the code parses once every
    `...` is a name, or an entry when it stands alone on its line, or is left out where it is an item of a list.
    None for code that parses, or fails for another reason."""
    failing = _syntax_error_line(code)
    if failing is None:
        return None
    slots_filled = _slots_filled(code)
    filled = [
        PSEUDO_ELLIPSIS.sub("_", code),
        _entries_filled(code),
        _entries_filled(code, "**_"),
        ELLIPSIS_ITEM.sub("", code),
    ]
    if parse(slots_filled) is None:
        # a template's slots beside the `...` (`@with_signature(<arguments>)` over `def impl(...):`); where the
        # slots alone make it parse, it is a template
        filled.append(PSEUDO_ELLIPSIS.sub("_", slots_filled))
    if all(parse(variant) is None for variant in filled):
        return None
    lines = code.split("\n")
    gaps = [number for number, line in enumerate(lines, 1) if PSEUDO_ELLIPSIS.search(line)]
    return failing if failing in gaps else (gaps[0] if gaps else None)


def commented_body(code: str) -> int | None:
    """The line of a `class` or `def` (any compound statement) whose body is only a comment (`# define your
    extension here`), when that is all that keeps the code from parsing."""
    filled = _commented_bodies_filled(code)
    return filled[0] if filled is not None else None


def skeleton_body(code: str) -> int | None:
    """The line of a header whose body of comments the reader writes: in a block that leaves names to the reader
    too (their text, their objects, an import), which shows a shape to fill in. A block that is whole, every name
    it uses at hand, is there to be pasted as it is, and its body of comments is the IndentationError the reader
    then meets (the page needs a `pass` or a `...` there)."""
    filled = _commented_bodies_filled(code)
    if filled is None:
        return None
    line, tree = filled
    return line if undefined_names(tree) else None


def _commented_bodies_filled(code: str) -> tuple[int, ast.Module] | None:
    """(the first header's line, the code parsed with a `...` under each header whose body is only a comment)
    when those bodies are all that keep the code from parsing."""
    if parse(code) is not None:
        return None
    lines = code.split("\n")
    headers = [number for number in range(len(lines)) if _opens_commented_body(lines, number)]
    filled = list(lines)
    for number in reversed(headers):
        filled.insert(number + 1, " " * (indent_of(lines[number]) + 4) + "...")
    tree = parse("\n".join(filled)) if headers else None
    return (headers[0] + 1, tree) if tree is not None else None


def _opens_commented_body(lines: list[str], number: int) -> bool:
    """lines[number] ends a statement's header with `:`, a comment follows it (on its line or the next ones)
    and no code indented under it. A header with no comment under it is code left unindented: an error a reader
    meets, not a body left for them to write."""
    header, hashed, _ = lines[number].partition("#")
    header = header.rstrip()
    if not header.endswith(":") or not header.strip():
        return False
    rest = [line for line in lines[number + 1 :] if line.strip()]
    comments = list(itertools.takewhile(lambda line: line.lstrip().startswith("#"), rest))
    following = rest[len(comments) :]
    commented = bool(hashed) or bool(comments)
    return commented and (not following or indent_of(following[0]) <= indent_of(lines[number]))


# IPython's magics (`%timeit`, `%%time`) and shell escapes (`!pip install`), at the start of a line of a cell.
MAGIC_LINE = re.compile(r"^(%%?[A-Za-z_]\w*|!\s*[A-Za-z_][\w.-]*)")


def ipython_magics(code: str) -> list[tuple[int, str]]:
    """(line, magic) of each IPython magic or shell escape in code that Python cannot parse because of them."""
    if parse(code) is not None:
        return []
    return [
        (number, match.group(1).replace(" ", ""))
        for number, line in enumerate(code.split("\n"), 1)
        if (match := MAGIC_LINE.match(line))
    ]


def without_leading_magics(code: str) -> str | None:
    """The code with the magics its first lines hold turned into comments (the rest is plain Python), or None
    when a magic sits among the code or the rest does not parse."""
    magics = ipython_magics(code)
    lines = code.split("\n")
    first_code = next(
        (
            n
            for n, line in enumerate(lines, 1)
            if line.strip() and not line.lstrip().startswith("#") and not MAGIC_LINE.match(line)
        ),
        len(lines) + 1,
    )
    if not magics or any(number > first_code for number, _ in magics):
        return None
    for number, magic in magics:
        lines[number - 1] = f"# {lines[number - 1]}  (IPython magic `{magic}`, which only IPython runs: left out)"
    rest = "\n".join(lines)
    return rest if parse(rest) is not None else None


# A `...` alone on its line, in a list or a call: the entries the reader has (`routes = [\n    ...\n    Route()]`).
ELIDED_ENTRIES = re.compile(r"^(\s*)(?:\.\.\.|…)\s*,?\s*$", re.MULTILINE)


def _entries_filled(code: str, entry: str = "_") -> str:
    """The code with each `...` that stands alone on its line read as one entry among others (`_,`), or (entry
    `**_`) as the call's other keyword arguments, where it follows keywords (`path="/x",` then `...,`)."""
    return PSEUDO_ELLIPSIS.sub("_", ELIDED_ENTRIES.sub(rf"\1{entry},", code))


def _is_ellipsis(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _in_class_body(tree: ast.Module, target: ast.AST) -> bool:
    return any(isinstance(node, ast.ClassDef) and target in node.body for node in ast.walk(tree))


def exits_as_written(tree: ast.Module, line: int) -> bool:
    """The statement at line is a module-level `raise` whose exit the code spells out (`raise SystemExit(1)`,
    `raise Exit("Oh no!", code=1)`): the block shows how to exit, not a program that stops short. An exit whose
    status is computed (`raise SystemExit(main())`) reports how the program fared."""
    node = next((n for n in tree.body if isinstance(n, ast.Raise) and n.lineno == line), None)
    if node is None or node.exc is None:
        return False
    if not isinstance(node.exc, ast.Call):
        return isinstance(node.exc, (ast.Name, ast.Attribute))
    values = [*node.exc.args, *(keyword.value for keyword in node.exc.keywords)]
    return all(isinstance(value, ast.Constant) for value in values)


def _comments(code: str) -> list[tuple[int, str]] | None:
    """The comments of the code with their lines; None when it does not tokenize."""
    try:
        return [
            (token.start[0], token.string)
            for token in tokenize.generate_tokens(io.StringIO(code).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError):
        return None


def _exception_named(text: str) -> str:
    """The exception text names ("Exception" when it names none)."""
    named = re.search(rf"`?\b({EXCEPTION_NAME})\b`?", text)
    return named.group(1) if named else "Exception"


def said_to_raise(code: str, tree: ast.Module) -> tuple[str, int] | None:
    """(the exception, the line of the statement) a comment in the code says a statement raises: on its line, or
    on a line of its own right above it. Only a simple statement at module level (a comment in a function, a
    `try` or a `with pytest.raises` block speaks of code that does not stop the example)."""
    comments = _comments(code)
    if comments is None:
        return None
    lines = code.split("\n")
    for line, comment in comments:
        match = RAISES_COMMENT.match(comment)
        if not match or (match.group("named") and match.group("named").endswith("Warning")):
            continue
        if match.group("lead") is not None and (
            # a negation in the verb's own clause: "Not a direct assignment, raises X" still says it raises
            NEGATED.search(re.split(r"[,;:.]", match.group("lead"))[-1])
            or HYPOTHETICAL.search(match.group("lead"))
            or CONDITION.match(match.group("rest"))
        ):
            continue
        statement = top_statement(tree, line)
        above = next((node for node in tree.body if node.end_lineno == line - 1), None)
        if statement is None and above is not None and match.group("shown"):
            # An error shown the way it prints (`# KeyError: 'x'`), right under a statement, is that statement's
            # result, as a value shown under it would be.
            statement = above
        elif statement is None:
            # A comment on a line of its own speaks of the statement right below it.
            below = next(
                (n for n, text in enumerate(lines[line:], line + 1) if text.strip() and text.lstrip()[0] != "#"), None
            )
            statement = next((node for node in tree.body if node.lineno == below), None)
        elif lines[line - 1].lstrip().startswith("#"):
            continue  # inside a compound statement (a `try`, a function): about code that may not stop the example
        if statement is None or hasattr(statement, "body"):
            continue
        said = match.group("named") or match.group("shown") or match.group("late") or match.group("told")
        return said or "Exception", statement.lineno
    return None


def introduced_as_failing(sentence: str, tree: ast.Module) -> str | None:
    """The exception the sentence right before a block says the whole block raises ("Exception" when it names
    none); None when the sentence says no such thing, or the block handles the exception itself, or only defines
    functions (alone or as the methods of a plain class): it runs none of them, so the sentence tells what its
    code does once it is called. (A class with fields or a decorator runs code as it is defined; pytest calls
    the functions of a test module.)"""
    if not RAISES_INTRO.search(sentence) or NEGATED.search(sentence) or INSTRUCTION.match(sentence):
        return None
    if all(_defines_functions_only(node) for node in tree.body) and not is_test_module(tree):
        return None
    if handles_exceptions(tree):
        return None
    return _exception_named(sentence)


def handles_exceptions(tree: ast.Module) -> bool:
    """The block catches exceptions itself (a `try`, `with pytest.raises(...)`, `with suppress(...)`): an error in
    it does not stop it."""
    return any(
        isinstance(node, (ast.Try, ast.TryStar))
        or (isinstance(node, (ast.With, ast.AsyncWith)) and re.search(r"raises|suppress", ast.unparse(node.items[0])))
        for node in ast.walk(tree)
    )


def _defines_functions_only(node: ast.stmt) -> bool:
    """An import, a function, or a class without decorators whose body only defines methods (and a docstring)."""
    if isinstance(node, ast.ClassDef):
        body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        return not node.decorator_list and all(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) for s in body)
    return isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef))


# The sentence right after a block saying the block fails: "This code does not work and ...", "The test above
# fails with a `KeyError`".
FAILS_AFTER = re.compile(
    r"^(?:this|the\s+(?:code|example|test|snippet)s?\s+above|the\s+above)(?:\s+(?:code|example|test|snippet))?\s+"
    r"(?:does\s+not\s+work|doesn't\s+work|won't\s+work|will\s+not\s+work|fails|raises|throws|errors)\b",
    re.IGNORECASE,
)


def said_after_to_fail(prose_after: str) -> str | None:
    """The exception the first sentence after a block says the block raises ("Exception" when it names none)."""
    first = re.split(r"(?<=[.!?:])\s+", prose_after.strip(), maxsplit=1)[0]
    if not FAILS_AFTER.search(first):
        return None
    return _exception_named(first)


# A comment in a test saying the test fails on purpose: "# the key is missing, so the test will fail",
# "# this test fails", "# fails: the values differ".
TEST_FAILS_COMMENT = re.compile(
    r"\b(?:(?:the|this)\s+)?(?:test|assert(?:ion)?|it|this)\s+(?:will|would|should|is\s+going\s+to)\s+fail\b|"
    r"\b(?:the|this)\s+(?:test|assert(?:ion)?)\s+fails\b|^#\s*fails?\b",
    re.IGNORECASE,
)


def said_in_test_to_fail(code: str) -> str | None:
    """The exception a comment in a block of tests says the test fails with ("Exception" when it names none): the
    page shows a failing test to show what pytest reports, and the reader sees it fail."""
    for _, comment in _comments(code) or []:
        match = TEST_FAILS_COMMENT.search(comment)
        if match and not NEGATED.search(comment[: match.end()]):
            return _exception_named(comment)
    return None


@dataclass(frozen=True)
class DocumentedPrint:
    """A print statement and the output the example writes right under it (`#>` comment lines, or a string
    that follows it: the style of pydantic's docs and pytest-examples)."""

    first_line: int
    last_line: int
    text: str


def documented_prints(code: str, tree: ast.Module | None) -> list[DocumentedPrint]:
    if tree is None:
        return []
    lines = code.split("\n")
    found = []
    for body in _bodies(tree):
        for position, statement in enumerate(body):
            if not _is_print(statement):
                continue
            end = statement.end_lineno or statement.lineno
            marked = []
            for line in lines[end:]:
                match = OUTPUT_COMMENT.match(line)
                if not match:
                    break
                marked.append(match.group(1))
            if marked:
                found.append(DocumentedPrint(statement.lineno, end, "\n".join(marked)))
                continue
            following = body[position + 1] if position + 1 < len(body) else None
            if (
                isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found.append(DocumentedPrint(statement.lineno, end, _dedent_docstring(following.value.value)))
    return sorted(found, key=lambda shown: shown.first_line)


@dataclass(frozen=True)
class ValueComment:
    """A statement of the script's top level and the value its comment says it has (`env.dump()  # {'a': 1}`,
    `url = env("URL")  # => 'https://…'`): what the reader who looks at that value sees, written as a literal."""

    line: int
    value: object
    # the statement is a call: text shown for it may be what it printed (a method that prints and returns True)
    call: bool = False


# An arrow some authors put before the value (`# => 42`, `# -> [1, 2]`).
VALUE_ARROW = re.compile(r"^\s*(?:=>|->|==>|→)\s*")


def value_comments(code: str, tree: ast.Module | None) -> list[ValueComment]:
    """The top-level one-line statements (an expression, or an assignment to one name) whose comment on the same
    line is a Python literal: the value the page says the statement has. A comment that does not parse as a
    literal is prose (`# Person('Alice')`, `# the user's name`), never compared."""
    if tree is None:
        return []
    comments, lines = _line_comments(code), code.split("\n")
    found = []
    for statement in tree.body:
        line = statement.lineno
        if line != statement.end_lineno:
            continue
        said = comments.get(line)
        if said is None:  # the value on the comment lines right under it (`# {'a': 1,` … `#  'b': 2}`)
            said = "\n".join(_comments_under(lines, line))
            if not said.strip().startswith(("{", "[", "(")) and not VALUE_ARROW.match(said):
                continue
        valued = isinstance(statement, ast.Expr) and not isinstance(statement.value, ast.Constant)
        named = isinstance(statement, ast.Assign) and [type(t) for t in statement.targets] == [ast.Name]
        if not (valued or named) or (isinstance(statement, ast.Expr) and _is_print(statement)):
            continue
        text = VALUE_ARROW.sub("", said).strip()
        try:
            value = ast.literal_eval(text)
        except NOT_A_LITERAL:
            continue
        found.append(
            ValueComment(line, value, isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call))
        )
    return found


def _line_comments(code: str) -> dict[int, str]:
    """Each line's comment, without its `#`."""
    return {line: text[1:] for line, text in _comments(code) or []}


def comment_shows_message(code: str, tree: ast.Module, line: int, message: str) -> bool:
    """A comment on the top-level statement that holds line, or on the comment lines right under it, holds the
    message (`env.int("TTL")` over `# => Environment variable "TTL" invalid: …`): the page shows what it raises."""
    wanted = " ".join(message.split())
    return len(wanted) >= 10 and wanted in _said_about(code, tree, line)


def type_shown_with_message(code: str, tree: ast.Module, line: int, message: str) -> str | None:
    """The exception the comment on the statement that holds line names right before the message it shows
    (`# "MachineError: No initial state configured…"`), if it names one."""
    wanted = " ".join(message.split())
    shown = re.search(rf"(?P<name>{EXCEPTION_NAME})\s*:\s*{re.escape(wanted[:40])}", _said_about(code, tree, line))
    return shown.group("name") if shown and len(wanted) >= 10 else None


def _said_about(code: str, tree: ast.Module, line: int) -> str:
    """The comments on the top-level statement that holds line and on the comment lines right under it, as one
    line of words."""
    statement = top_statement(tree, line)
    if statement is None:
        return ""
    comments, lines = _line_comments(code), code.split("\n")
    end = statement.end_lineno or statement.lineno
    said = [comments[number] for number in range(statement.lineno, end + 1) if number in comments]
    said += _comments_under(lines, end)
    return " ".join(" ".join(said).split())


def _comments_under(lines: list[str], end: int) -> list[str]:
    """The comment lines right under the statement that ends at line `end`, without their `#`."""
    return [text.lstrip()[1:] for text in itertools.takewhile(lambda t: t.lstrip().startswith("#"), lines[end:])]


def documented_output(code: str, tree: ast.Module | None) -> str | None:
    """What the example says it prints, written in the code itself, in page order."""
    shown = documented_prints(code, tree)
    return "\n".join(item.text for item in shown) if shown else None


def without_documented_output(code: str, tree: ast.Module | None) -> str:
    """The code a reader types: comments and the documented-output strings left out (a placeholder there is
    part of an output, not a value to fill in)."""
    lines = code.split("\n")
    if tree is not None:
        for body in _bodies(tree):
            for before, after in zip(body, body[1:], strict=False):
                if (
                    _is_print(before)
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                ):
                    for number in range(after.lineno - 1, after.end_lineno or after.lineno):
                        lines[number] = ""
    return "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in lines)


# Calls that build a collection without an order of its own: a set's order follows its members' hashes, and
# Python salts a string's hash anew in every process.
UNORDERED_BUILDERS = {"set", "frozenset"}


def builds_a_set(tree: ast.Module) -> bool:
    """The code makes a set (`{'a', 'b'}`, a set comprehension, `set(...)`, `frozenset(...)`): what iterates it
    sees its members in an order that may change from one run to the next."""
    return any(
        isinstance(node, (ast.Set, ast.SetComp)) or (isinstance(node, ast.Call) and _callee(node) in UNORDERED_BUILDERS)
        for node in ast.walk(tree)
    )


def _bodies(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every list of statements in the tree (module, function and class bodies, branches, handlers)."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body


def _is_print(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Call)
        and isinstance(statement.value.func, ast.Name)
        and statement.value.func.id == "print"
    )


def _dedent_docstring(text: str) -> str:
    lines = text.lstrip("\n").rstrip().split("\n")
    margin = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[margin:] for line in lines)


def _top_level_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that runs at module level: not inside a function, class body or lambda."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def defined_names(tree: ast.Module) -> set[str]:
    """Names an example leaves defined at module level."""
    names = set()
    for node in _top_level_nodes(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def used_in_functions(tree: ast.Module) -> set[str]:
    """Names read inside the functions, lambdas and classes the code defines: they are looked up when those run."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    return {
        node.id
        for scope in ast.walk(tree)
        if isinstance(scope, scopes)
        for node in ast.walk(scope)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _read_before_bound(tree: ast.Module) -> set[str]:
    """Names the example binds at module level but reads before it binds them (`logger = logger.patch(...)`,
    `total += 1`): their first value comes from an earlier example."""
    bound: set[str] = set()
    read: set[str] = set()
    for statement in tree.body:
        if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            loads = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
                loads.add(statement.target.id)
            read |= loads - bound
        bound |= defined_names(ast.Module(body=[statement], type_ignores=[]))
    return read & defined_names(tree)


def _locally_bound(tree: ast.Module) -> set[str]:
    """Names bound anywhere in the example (parameters, locals, loop variables), so using them is no
    dependency on another example."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def unused_definitions(tree: ast.Module) -> set[str]:
    """The classes and functions an example defines and never uses itself."""
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    made = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return made - used


# A comment labelling the code below it as the old release's, or the new one's (`# Before (v2)`, `# After (v3)`).
BEFORE_LABEL = re.compile(r"^\s*#\s*(?:before|old(?:\s+(?:api|way))?)\s*(?:\([^)]*\)|v?\d[\w.]*)?\s*:?\s*$", re.I)
AFTER_LABEL = re.compile(r"^\s*#\s*(?:after|now|new(?:\s+(?:api|way))?)\s*(?:\([^)]*\)|v?\d[\w.]*)?\s*:?\s*$", re.I)


def without_old_release(code: str) -> str:
    """The code with its old release's part blanked (a `# Before (v2)` comment down to the `# After (v3)` one, in
    a block that shows both): a reader of the upgrade runs the new part; its lines keep their numbers."""
    lines = code.split("\n")
    before = next((n for n, line in enumerate(lines) if BEFORE_LABEL.match(line)), None)
    after = next(
        (n for n, line in enumerate(lines) if AFTER_LABEL.match(line) and before is not None and n > before), None
    )
    if before is None or after is None:
        return code
    return "\n".join("" if before < n < after else line for n, line in enumerate(lines))


def module_aliases(tree: ast.Module) -> dict[str, str]:
    """The names the code imports whole modules under (`import numpy as np`: np -> numpy)."""
    return {
        alias.asname: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.asname and alias.asname != alias.name
    }


def empty_classes(tree: ast.Module) -> set[str]:
    """The classes the code declares with nothing in their body but `...`, `pass` or a docstring: a shape the reader
    fills in."""
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and all(
            isinstance(statement, ast.Pass)
            or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
            for statement in node.body
        )
    }


def undefined_names(tree: ast.Module) -> set[str]:
    """Names the example uses without defining them (nor being builtins)."""
    return _unbound_names(tree) - BUILTIN_NAMES


def _unbound_names(tree: ast.Module) -> set[str]:
    """Names the example uses without defining them, builtins too (an earlier example may shadow one: `hash`)."""
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return used - _locally_bound(tree)


def typing_names(names: Collection[str]) -> list[str]:
    """Those of names that the standard library's `typing` exports (`Optional`, `Any`, `Callable`): a reader who
    meets one never imported knows where it comes from, whatever else the block leaves to them."""
    return sorted(name for name in names if name in typing.__all__)


def first_uses(tree: ast.Module, names: Collection[str]) -> dict[str, int]:
    """The line of the code each of names is first used on, in the order a reader reading down meets them."""
    first: dict[str, int] = {}
    for line, name in sorted((n.lineno, n.id) for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in names):
        first.setdefault(name, line)
    return first


def argument_places(tree: ast.Module, names: Collection[str]) -> dict[str, list[tuple[str, int | str]]]:
    """Where the code passes each of names, alone, to a call of a dotted callee (`markdown.markdown(text)`,
    `convert(source=text)`): the callee's dotted path (from the module the code imports it from, if it does) and
    the argument's position or keyword."""
    imported = _import_paths(tree)
    places: dict[str, list[tuple[str, int | str]]] = {}
    for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call)):
        callee = _dotted(call.func)
        if callee is None:
            continue
        root, _, rest = callee.partition(".")
        callee = ".".join(filter(None, (imported.get(root, root), rest)))
        passed: list[tuple[int | str, ast.expr]] = [*enumerate(call.args)]
        passed += [(k.arg, k.value) for k in call.keywords if k.arg]
        for place, value in passed:
            if isinstance(value, ast.Name) and value.id in names:
                places.setdefault(value.id, []).append((callee, place))
    return places


def _import_paths(tree: ast.Module) -> dict[str, str]:
    """What each name the code's imports bind stands for: `greet` for `from shapes import greet`, `np` for
    `numpy`."""
    paths = {}
    for node in _top_level_nodes(tree):
        if isinstance(node, ast.Import):
            paths.update({alias.asname: alias.name for alias in node.names if alias.asname})
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            paths.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
    return paths


def _dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a chain of attributes on a name, None for any other expression."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return f"{owner}.{node.attr}" if owner else None
    return None


def names_at(tree: ast.Module, line: int) -> set[str]:
    """The names the statement at a line uses (of a compound statement, those of its own lines, not its body's)."""
    spans = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    if not spans:
        return set()
    names: set[str] = set()
    todo: list[ast.AST] = [min(spans, key=lambda node: (node.end_lineno or node.lineno) - node.lineno)]
    while todo:
        for child in ast.iter_child_nodes(todo.pop()):
            if isinstance(child, ast.Name):
                names.add(child.id)
            if not isinstance(child, ast.stmt):
                todo.append(child)
    return names


def imported_names(tree: ast.Module) -> dict[str, str]:
    """The names an example's imports bind at module level, with the module each comes from."""
    names = {}
    for node in _top_level_nodes(tree):
        if isinstance(node, ast.Import):
            names.update({alias.asname or alias.name.split(".")[0]: alias.name for alias in node.names})
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update({alias.asname or alias.name: node.module for alias in node.names if alias.name != "*"})
    return names


def used_as_modules(tree: ast.Module) -> set[str]:
    """Names the code reaches into (`name.attr`): where a module and a function share a name (`from x import x`),
    these are meant as the module."""
    return {
        node.value.id for node in ast.walk(tree) if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    }


def uncalled_main(tree: ast.Module) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """A `main` function the module defines at its top and never calls nor hands on (`asyncio.run(main())` left
    out): its reader runs it, as the name says. One with parameters it needs is not theirs to call blindly."""
    mains = [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name == "main"
        and len(node.args.posonlyargs + node.args.args) == len(node.args.defaults)
        and all(default is not None for default in node.args.kw_defaults)
    ]
    used = any(isinstance(node, ast.Name) and node.id == "main" for node in ast.walk(tree))
    return mains[0] if len(mains) == 1 and not used else None


def reached_deep_only(tree: ast.Module) -> set[str]:
    """Names the code uses only as the start of a chain two attributes long or more (`db.model.get_id()`): an
    object whose inside the code knows and the page never builds, such as the reader's database handle."""
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    deep: set[str] = set()
    shallow: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            grandparent = parents.get(id(parent)) if isinstance(parent, ast.Attribute) else None
            (deep if isinstance(grandparent, ast.Attribute) and grandparent.value is parent else shallow).add(node.id)
    return deep - shallow


def attributes_reached(tree: ast.Module, names: set[str]) -> dict[str, list[str]]:
    """The attributes the code reaches on each of the names (`datetime.utcnow` -> datetime: [utcnow])."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
            found.setdefault(node.value.id, set()).add(node.attr)
    return {name: sorted(attributes) for name, attributes in found.items()}


def required_variables(tree: ast.Module) -> list[str]:
    """The environment variables the code reads with `os.environ["NAME"]` (or `environ["NAME"]`): ones it cannot
    run without, where `.get()` and `getenv()` have a default to fall back on."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)):
            continue
        reads = node.value
        environ = (isinstance(reads, ast.Attribute) and reads.attr == "environ") or (
            isinstance(reads, ast.Name) and reads.id == "environ"
        )
        if environ and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            found.append(node.slice.value)
    return list(dict.fromkeys(found))


def imported_modules(tree: ast.Module | None) -> list[str]:
    """Modules the example imports (absolute imports), in order."""
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return list(dict.fromkeys(found))


def awaits_at_top_level(tree: ast.Module) -> bool:
    return any(isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)) for node in _top_level_nodes(tree))


def definitions_only(tree: ast.Module) -> str:
    """The statements of an example that define names for later ones (imports, functions, classes), without
    the ones that act (calls, prints): what a later example may build on."""
    kept = [
        node
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    return "\n".join(ast.unparse(node) for node in kept)


def dependencies(index: int, trees: list[ast.Module | None], unsettled: Collection[int] = ()) -> list[int]:
    """Earlier examples this one builds on: for each name it uses without defining (a builtin an earlier one
    shadows, `hash = ...`, too), the last earlier example that defines it (transitively), in order. An unsettled
    example (it failed or was not run) may never have defined the name, so the one before it that defines it is
    needed too."""
    needed: set[int] = set()
    pending = [index]
    while pending:
        current = pending.pop()
        tree = trees[current]
        if tree is None:
            continue
        for name in _unbound_names(tree) | _read_before_bound(tree):
            changed: list[int] = []  # the examples between that change the object in place, latest first
            for earlier in range(current - 1, -1, -1):
                earlier_tree = trees[earlier]
                if earlier_tree is None:
                    continue
                if name in defined_names(earlier_tree):
                    # A module's functions called on it configure the library, which a block on its own starts
                    # afresh; an object made and changed is the reader's state.
                    changers = [] if name in imported_names(earlier_tree) else changed
                    for example in [earlier, *changers]:
                        if example not in needed:
                            needed.add(example)
                            pending.append(example)
                    if earlier not in unsettled:
                        break
                elif name in changed_in_place(earlier_tree):
                    changed.append(earlier)
    return sorted(needed)


def changed_in_place(tree: ast.Module) -> set[str]:
    """Names whose objects the module's top-level statements change without binding the name again: a method
    called on them (`container.register(...)`), an attribute or item set (`app.debug = True`, `cache["k"] = 1`)."""
    changed = set()
    for node in tree.body:
        target: ast.expr | None = None
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
        ):
            target = node.value.func
        elif isinstance(node, ast.Assign):
            target = next((t for t in node.targets if isinstance(t, (ast.Attribute, ast.Subscript))), None)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(
            node.target, (ast.Attribute, ast.Subscript)
        ):
            target = node.target
        while isinstance(target, (ast.Attribute, ast.Subscript, ast.Call)):
            target = target.func if isinstance(target, ast.Call) else target.value
        if isinstance(target, ast.Name):
            changed.add(target.id)
    return changed


# -- tests a reader runs with pytest ------------------------------------------------------------------------------
def is_test_module(tree: ast.Module) -> bool:
    """A module the reader runs with pytest: it defines tests (test_* functions, Test* classes with test methods)
    or fixtures, and never runs them itself (a script that calls its tests, or runs under `__main__`, is a
    script)."""
    tests = test_names(tree)
    if not tests and not fixture_names(tree):
        return False
    for node in _top_level_nodes(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in tests:
            return False
        if isinstance(node, ast.Constant) and node.value == "__main__":
            return False
    return True


def _tests_of(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Each test of a module with the name it is collected under: a test_* function by its own, a test_* method
    by its Test* class's."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            methods = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            found += [(node.name, method) for method in methods if method.name.startswith("test_")]
    return found


def test_names(tree: ast.Module) -> set[str]:
    """The tests of a module: test_* functions, Test* classes holding test_* methods. pytest collects any name
    that starts with "test", but a function a page names `test` or `testing` is as often a task or a view as a
    test; `test_` is how tests are named."""
    return {name for name, _ in _tests_of(tree)}


def fixtures_asked(tree: ast.Module) -> set[str]:
    """The parameters of a module's tests (`self` aside): the fixtures pytest hands its tests by those names."""
    return {
        argument.arg
        for _, function in _tests_of(tree)
        for argument in function.args.posonlyargs + function.args.args + function.args.kwonlyargs
        if argument.arg not in ("self", "cls")
    }


def fixture_names(tree: ast.Module) -> list[str]:
    """The fixtures a module defines at its top level (`@pytest.fixture`, `@fixture(name="db")`), by the name tests
    ask for them by."""
    found = []
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            target = call.func if call is not None else decorator
            named = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if named == "fixture":
                names = [
                    k.value.value
                    for k in (call.keywords if call else [])
                    if k.arg == "name" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)
                ]
                found.append(names[0] if names else node.name)
                break
    return found


# The methods Python calls on a class's behalf (its data model), by the word between their underscores.
SPECIAL_METHODS = (
    {"init", "new", "del", "repr", "str", "bytes", "format", "hash", "bool", "call", "len", "iter", "next"}
    | {"reversed", "contains", "getitem", "setitem", "delitem", "missing", "getattr", "getattribute", "setattr"}
    | {"delattr", "dir", "get", "set", "delete", "set_name", "init_subclass", "class_getitem", "enter", "exit"}
    | {"aenter", "aexit", "await", "aiter", "anext", "lt", "le", "eq", "ne", "gt", "ge", "post_init", "add", "sub"}
    | {"mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift", "neg", "pos", "abs"}
    | {"invert", "index"}
)


def misspelt_special_method(tree: ast.Module) -> tuple[str, str, int] | None:
    """A method of a class whose name is a special method's with its underscores wrong (`__init`, `_repr_`):
    (the name, the method meant, its line). Python never calls it, though the page means it to. A private
    helper's name (`_get`) is no misspelling, and a class that also has the method meant spells the other one on
    purpose."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        methods = {m.name: m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}
        for name, method in methods.items():
            word, meant = name.strip("_"), f"__{name.strip('_')}__"
            wrong = name.startswith("__") or (name.startswith("_") and name.endswith("_"))
            if name != meant and word in SPECIAL_METHODS and wrong and meant not in methods:
                return name, meant, method.lineno
    return None


def top_statement(tree: ast.Module, line: int) -> ast.stmt | None:
    """The top-level statement that holds the line."""
    return next((node for node in tree.body if node.lineno <= line <= (node.end_lineno or node.lineno)), None)


def statement_at(tree: ast.Module, line: int) -> str | None:
    """The source of the top-level statement that holds the line."""
    node = top_statement(tree, line)
    return ast.unparse(node) if node is not None else None


def assigned_names(tree: ast.Module) -> set[str]:
    """The names the code binds by assignment (not by an import, a `def` or a `class`): the objects it makes."""
    targets = [
        target
        for node in ast.walk(tree)
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
    ]
    return {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}


def string_constants(tree: ast.AST) -> list[str]:
    """The string literals of the code."""
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def elided_body(tree: ast.Module) -> bool:
    """Some class or function of the code has only `...` for a body (a docstring before it allowed)."""
    return any(
        isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and _only_ellipsis(node.body)
        for node in ast.walk(tree)
    )
