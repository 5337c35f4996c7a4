"""Reading one walkthrough step the way a newcomer would: what it tells them to do (commands, files to
write, Python to run, servers to start), what it promises they will see, and what it leaves unsaid.

The step's markdown (contentForUser) is what the reader sees; operationsForAgent is prose ("1. Create the
directory: mkdir app") that names the same work. Both are read; work only the operations name is done too,
and noted as never shown to the reader."""

import ast
import doctest
import re
import shutil
from dataclasses import dataclass, field

from stackbench.docs.python_code import is_session, session_parts, session_source
from stackbench.docs.tutorial_text import (
    ALTERNATIVE_INTRO,
    APPEND_VERBS,
    FILE_INTRO,
    OUTPUT_LANGUAGES,
    PYTHON_LANGUAGES,
    SHELL_LANGUAGES,
    UPDATE_VERBS,
    is_file_path,
    shell_segments,
    split_shell_lines,
)
from stackbench.lib.markdown import info_language, tokens, without_fenced_blocks

SHELL_BUILTINS = {
    "cd",
    "export",
    "source",
    ".",
    "echo",
    "set",
    "unset",
    "alias",
    "printf",
    "pushd",
    "popd",
    "read",
    "eval",
    "exec",
    "ulimit",
    "umask",
    "wait",
    "test",
    "[",
    "true",
    "false",
    "type",
    "hash",
}
KNOWN_TOOLS = {
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "pip",
    "pip3",
    "python",
    "python3",
    "node",
    "uv",
    "uvx",
    "poetry",
    "pipx",
    "git",
    "curl",
    "wget",
    "docker",
    "cargo",
    "go",
    "make",
    "java",
    "mvn",
    "gradle",
    "deno",
    "bun",
    "brew",
    "apt",
    "apt-get",
    "conda",
    "mamba",
    "rustup",
    "dotnet",
    "ruby",
    "gem",
    "bundle",
    "php",
    "composer",
    "kubectl",
    "helm",
    "terraform",
    "aws",
    "gcloud",
    "az",
    "sqlite3",
    "psql",
    "mysql",
    "redis-cli",
    "mkdir",
    "touch",
    "ls",
    "cat",
    "cp",
    "mv",
    "rm",
    "chmod",
    "tar",
    "unzip",
    "grep",
    "sed",
    "awk",
    "head",
    "tail",
    "sort",
    "wc",
    "find",
    "jq",
    "pytest",
    "django-admin",
    "flask",
    "uvicorn",
    "gunicorn",
    "streamlit",
    "jupyter",
    "tox",
    "nox",
    "ruff",
    "black",
    "mypy",
    "rails",
    "next",
    "vite",
    "tsc",
    "ng",
    "vue",
    "expo",
    "swift",
    "xcodebuild",
    "gh",
    "heroku",
    "vercel",
    "netlify",
    "fly",
    "sam",
    "openssl",
    "ssh",
    "scp",
    "rsync",
    "diff",
    "patch",
    "env",
    "which",
    "sleep",
    "kill",
    "ps",
    "lsof",
    "http",
}
# Tools a reader of a Python library's docs is assumed to have already.
BASELINE_TOOLS = {
    "cd",
    "mkdir",
    "ls",
    "cat",
    "echo",
    "cp",
    "mv",
    "rm",
    "touch",
    "pwd",
    "export",
    "source",
    ".",
    "printf",
    "grep",
    "sed",
    "head",
    "tail",
    "chmod",
    "test",
    "[",
    "true",
    "false",
    "sleep",
    "env",
    "which",
    "python",
    "python3",
    "pip",
    "pip3",
    "set",
    "unset",
    "wc",
    "sort",
    "find",
    "tar",
    "kill",
    "read",
    "alias",
    "type",
    "diff",
    "awk",
    "unzip",
    "ps",
    "wait",
    "eval",
    "exec",
    "pushd",
    "popd",
}
TOOL_NAMES = {
    "node": ("node", "node.js", "nodejs"),
    "npm": ("npm", "node.js", "nodejs"),
    "npx": ("npx", "npm", "node.js"),
    "uv": ("uv",),
    "docker": ("docker",),
    "git": ("git",),
}
SETUP_ONLY_COMMANDS = {
    "cd",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "export",
    "source",
    ".",
    "set",
    "unset",
    "alias",
    "pushd",
    "popd",
    "rm",
    "chmod",
    "ln",
}
STANDARD_ENV = {
    "HOME",
    "PATH",
    "PWD",
    "OLDPWD",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "TMPDIR",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "CI",
    "HOSTNAME",
    "UID",
    "RANDOM",
    "SECONDS",
    "LINENO",
    "PPID",
}

SERVER_PATTERNS = [
    r"\b(npm|yarn|pnpm|bun)\s+(run\s+)?(dev|start|serve|preview)\b",
    r"\bnext\s+(dev|start)\b",
    r"(?:^|[;&|]\s*)(?:npx\s+|pnpm\s+(?:exec\s+)?|yarn\s+|bunx\s+)?vite(?:\s+(?:dev|serve|preview)\b|\s*$)",
    r"\b(uvicorn|gunicorn|hypercorn|daphne)\b",
    r"\bflask\s+run\b",
    r"manage\.py\s+runserver\b",
    r"\bpython3?\s+-m\s+http\.server\b",
    r"\bjupyter\s+(notebook|lab)\b",
    r"\bstreamlit\s+run\b",
    r"\bdocker(-|\s+)compose\s+up\b(?!.*\s-d\b)",
    r"\bredis-server\b",
    r"--watch\b",
    r"\btail\s+-f\b",
    r"\bfastapi\s+(dev|run)\b",
    r"\bcelery\b.*\bworker\b",
    r"\bmkdocs\s+serve\b",
]
VAGUE_PHRASES = [
    r"in the usual way",
    r"as usual",
    r"the usual way",
    r"appropriate(ly)?",
    r"as needed",
    r"as necessary",
    r"accordingly",
    r"etc\.",
    r"and so on",
    r"somehow",
    r"whatever",
    r"suitable",
    r"properly",
    r"the right (settings|values|way|options)",
    r"as you see fit",
    r"your preferred",
    r"and similar",
    r"some configuration",
    r"relevant settings",
]
INSTRUCTION_VERBS = (
    r"\b(apply|configure|set up|setup|tune|install|create|update|add|run|deploy|enable|adjust|"
    r"modify|edit|change|write|build|start|connect|initiali[sz]e|migrate|register|load|open|"
    r"replace|import|call|execute|define|generate)\b"
)
VERIFICATION_CUES = (
    r"\b(prints?|outputs?|should (see|print|show|return|display|look)|you('ll| will) see|returns?|"
    r"displays?|shows?|expected|verify|verif(y|ies)|check that|confirm|success indicators?|"
    r"succeeds?|you should have|responds? with|creates? a file)\b"
)
EXPECTED_OUTPUT = re.compile(
    r"(?:prints?|outputs?|returns?|shows?|displays?|should see|you(?:'ll| will) see|"
    r"responds? with)\s*:?\s*`([^`\n]+)`",
    re.IGNORECASE,
)
CROSS_REFERENCE = re.compile(
    r"\b(see|refer to|as described in|as explained in|as shown in|check out|read more|covered in|described in|"
    r"explained in|consult|documented in|follow the|according to)\b[^.\n]{0,80}?\b(guide|docs|documentation|"
    r"tutorial|section|page|chapter|reference|article|instructions|readme|quickstart|manual)\b",
    re.IGNORECASE,
)
LINK = re.compile(r"\[[^\]]+\]\([^)]+\)|https?://|<https?:")
PLACEHOLDER = re.compile(
    r"<\s*(?=[^<>\n]*(?:your|my|key|token|name|path|id|url|password|secret|value|project|user|host|port|[A-Z]{3}))"
    r"[A-Za-z_][\w .-]{0,40}>|\b(?:YOUR|MY)_[A-Z0-9_]+\b|\byour[-_](?:api[-_])?(?:key|token|secret|password)\b|"
    r"\bx{4,}\b|\bREPLACE_ME\b|\bCHANGEME\b|"
    # A repository named by its generic shape (`user/project`, `owner/repo`): the reader must pick a real one.
    r"(?<![\w./-])(?:user|username|owner|org|organization|your-?name|author)/(?:project|repo|repository|name)"
    r"(?![\w/-])",
)
LOCAL_URL = re.compile(r"https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::\d+)?(?:/[^\s)`'\"<>\]]*)?")
ENV_IN_SHELL = re.compile(r"\$\{?([A-Z][A-Z0-9_]{2,})\}?")
ENV_IN_PYTHON = re.compile(r"os\.(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*['\"]([A-Z][A-Z0-9_]+)['\"]")
ENV_ASSIGNED = re.compile(r"(?:^|[\s;&|])(?:export\s+)?([A-Z][A-Z0-9_]+)=")
OPS_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+", re.MULTILINE)
RUN_LABEL = re.compile(r"\b(run|execute|type|enter|launch|start|install|command)\b[^:]{0,30}:\s*(.+)$", re.IGNORECASE)
PROSE_SECOND_WORDS = {"sure", "it", "the", "a", "an", "your", "this", "that", "certain", "that's", "sure,", "of", "is"}


@dataclass
class Action:
    kind: str  # command, background, file, python
    text: str
    source: str = "content"  # content or operations
    path: str | None = None
    append: bool = False
    update: bool = False  # "update `x`", "in `x`": an edit of the file when it exists, see file_edits
    language: str = ""
    expected_output: str | None = None
    mode: str = "exec"  # "single" for a statement typed at a >>> prompt: its value is echoed
    skip_reason: str = ""


@dataclass
class StepPlan:
    actions: list[Action] = field(default_factory=list)
    unshown_operations: list[str] = field(default_factory=list)
    unplaced_blocks: list[str] = field(default_factory=list)
    unwritable_files: list[str] = field(default_factory=list)
    placeholders: list[tuple[str, bool]] = field(default_factory=list)  # (placeholder, explained)
    expected_outputs: list[str] = field(default_factory=list)
    has_verification: bool = False
    vague_phrases: list[str] = field(default_factory=list)
    has_instruction: bool = False
    unlinked_references: list[str] = field(default_factory=list)
    backticked_paths: list[str] = field(default_factory=list)
    skipped_alternatives: list[str] = field(default_factory=list)
    templates: list[str] = field(default_factory=list)
    operation_commands: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    reader_text: str = ""

    @property
    def has_concrete_work(self) -> bool:
        return bool(self.actions or self.placeholders)


def session_actions(body: str) -> list[Action]:
    """A `>>>` session as the reader types it: code before the prompts, then one statement per prompt, each with
    the output the page shows under it (`# doctest: +SKIP` statements are shown, not typed)."""
    prefix, session = session_parts(body) or ("", body)
    actions = [Action("python", prefix, language="python")] if prefix.strip() else []
    try:
        examples = doctest.DocTestParser().get_examples(session)
    except ValueError:
        return actions + [Action("python", session_source(body), language="python")]
    for example in examples:
        skip = example.options.get(doctest.SKIP)
        actions.append(
            Action(
                "python",
                example.source,
                language="python",
                expected_output=example.want if example.want.strip() else None,
                mode="single",
                skip_reason="marked `# doctest: +SKIP`: shown, not meant to be run" if skip else "",
            )
        )
    return actions


# Shell grammar, not programs: words after these are commands; segments starting with those run nothing.
COMMAND_PREFIXES = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "("}
NOT_A_COMMAND = {"for", "case", "select", "function", "done", "fi", "esac", "}", ")", "in"}
FUNCTION_HEADER = re.compile(r"(?:\bfunction\s+([\w.:-]+)\s*(?:\(\))?|([\w.:-]+)\s*\(\))\s*\{")


def command_words(command: str) -> list[str]:
    """The programs a command line runs (first word of each simple command, after VAR=value assignments),
    read with a shell tokenizer so quoted text (`python -c "a; b"`) is never taken for commands."""
    words = []
    for parts in shell_segments(FUNCTION_HEADER.sub(" ", command)):
        while parts and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", parts[0]):
            parts.pop(0)
        while parts and parts[0] in COMMAND_PREFIXES:
            parts.pop(0)
        if parts and parts[0] in NOT_A_COMMAND:
            continue
        if parts and parts[0] in {"sudo", "time", "nohup", "exec", "command"} and len(parts) > 1:
            parts.pop(0)
        if parts and re.match(r"^[\w./+-]+$", parts[0]):
            words.append(parts[0])
    return words


SHELL_ALIAS = re.compile(r"(?:^|[\s;&|])alias\s+([\w.:-]+)=")


def shell_definitions(command: str) -> set[str]:
    """The shell functions and aliases a command defines: names it may then run without installing anything."""
    names = {name for match in FUNCTION_HEADER.finditer(command) for name in match.groups() if name}
    return names | set(SHELL_ALIAS.findall(command))


def is_server_command(command: str) -> bool:
    return any(re.search(pattern, command) for pattern in SERVER_PATTERNS)


def is_setup_only(command: str) -> bool:
    """Commands that only arrange files and the shell; their effect is visible in the next step."""
    executed = without_function_bodies(command)
    words = command_words(executed)
    allowed = SETUP_ONLY_COMMANDS | (
        {"echo", "printf", "cat", "tee"} if re.search(r"(>>?|\btee\b)\s*\S", executed) else set()
    )
    return (bool(words) or bool(shell_definitions(command))) and all(word in allowed for word in words)


def without_function_bodies(command: str) -> str:
    """The command as it runs now: defining a function runs nothing of its body."""
    kept, position = [], 0
    for header in FUNCTION_HEADER.finditer(command):
        if header.start() < position:
            continue
        kept.append(command[position : header.start()])
        depth, position = 1, header.end()
        while position < len(command) and depth:
            depth += {"{": 1, "}": -1}.get(command[position], 0)
            position += 1
    kept.append(command[position:])
    return "".join(kept)


def defines_only(code: str) -> bool:
    """Python that only imports, assigns and defines: it prepares later steps and prints nothing."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    definitions = (
        ast.Import,
        ast.ImportFrom,
        ast.Assign,
        ast.AnnAssign,
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.ClassDef,
    )
    return all(isinstance(node, definitions) for node in tree.body)


def looks_like_command(text: str, labelled: bool, path: str | None = None) -> bool:
    text = text.strip().rstrip(".").strip()
    if not text or len(text) > 400 or text.endswith("?"):
        return False
    words = text.split()
    first = words[0]
    if not re.match(r"^[\w./+-]+$", first):
        return False
    if len(words) > 1 and words[1].lower() in PROSE_SECOND_WORDS:
        return False
    known = first in SHELL_BUILTINS or first in KNOWN_TOOLS or first.startswith("./") or first.endswith(".sh")
    if known:
        return True
    return labelled and shutil.which(first, path=path) is not None


def _normalize(command: str) -> str:
    return re.sub(r"\s+", " ", command.strip().rstrip(";")).strip()


def _strip_code_spans(text: str) -> str:
    return re.sub(r"`[^`]*`", "", text)


def read_step(step: dict, path_for_lookup: str | None = None) -> StepPlan:
    """Turn a step (as next_step serves it) into what a reader would do and what to check. Only the reader's
    text (contentForUser) makes promises and can be unclear; operations only add work the reader needs."""
    content = first_branch_only(first_tabs_only(step.get("contentForUser") or ""))
    operations = step.get("operationsForAgent") or ""
    plan = StepPlan(reader_text=content)
    _read_content(content, plan)
    _read_operations(operations, plan, path_for_lookup)
    prose = without_fenced_blocks(content)
    plan.expected_outputs += [m.group(1).strip() for m in EXPECTED_OUTPUT.finditer(prose)]
    plan.urls = list(dict.fromkeys(match.rstrip(".,;:)`") for match in LOCAL_URL.findall(content)))
    plan.has_verification = (
        bool(re.search(VERIFICATION_CUES, prose, re.IGNORECASE))
        or any(action.expected_output for action in plan.actions)
        or bool(plan.urls)  # a page to open is a check the reader makes
    )
    plain_prose = _strip_code_spans(prose)
    plan.vague_phrases = sorted(
        {
            m.group(0).lower()
            for pattern in VAGUE_PHRASES
            for m in re.finditer(r"\b" + pattern + r"(?!\w)", plain_prose, re.IGNORECASE)
        }
    )
    plan.has_instruction = bool(re.search(INSTRUCTION_VERBS, plain_prose, re.IGNORECASE))
    for sentence in re.split(r"(?<=[.!?])\s+|\n", prose):
        if (
            CROSS_REFERENCE.search(sentence)
            and not LINK.search(sentence)
            and not re.search(r"\b(above|below|previous step|next step)\b", sentence, re.IGNORECASE)
        ):
            plan.unlinked_references.append(sentence.strip())
    for action in plan.actions:
        if action.kind in ("command", "background", "python") and action.source == "content":
            for match in PLACEHOLDER.finditer(action.text):
                explained = (
                    re.search(
                        r"\b(replace|substitute|where|fill in|your own)\b[^.\n]*" + re.escape(match.group(0)),
                        prose,
                        re.IGNORECASE,
                    )
                    is not None
                )
                plan.placeholders.append((match.group(0), explained))
    return plan


TAB = re.compile(r"^(\s*)===\s+\S")


def first_tabs_only(markdown: str) -> str:
    """MkDocs content tabs (`=== "npm"` then an indented body) offer one way per tab: the reader follows the
    first tab of each group. Its body is dedented so its code reads as code; the other tabs are dropped."""
    if "=== " not in markdown:
        return markdown
    lines, kept, index = markdown.split("\n"), [], 0
    while index < len(lines):
        header = TAB.match(lines[index])
        if not header:
            kept.append(lines[index])
            index += 1
            continue
        indent, first = len(header.group(1)), True
        while index < len(lines) and (header := TAB.match(lines[index])) and len(header.group(1)) == indent:
            index += 1
            body = []
            while index < len(lines) and (not lines[index].strip() or _indent(lines[index]) > indent):
                body.append(lines[index])
                index += 1
            if first:
                kept += [line[indent + 4 :] if line.strip() else "" for line in body]
            first = False
    return "\n".join(kept)


SUBHEADING = re.compile(r"^(#{3,6})\s+(.+?)\s*#*\s*$")
WAY_WORDS = {"using", "with", "via", "on", "for", "from", "option", "method", "approach", "alternative", "in"}
OPERATING_SYSTEMS = {"linux", "macos", "mac", "windows", "unix", "ubuntu", "debian", "osx"}


def first_branch_only(markdown: str) -> str:
    """Sibling sub-sections that are ways to the same end ("New project" / "Existing project", "Using pip" /
    "Using conda", "On Windows" / "On Linux"): the reader follows one; the first, or the one for Linux (the
    machine the audit runs on). Other sub-sections are parts of the step, all followed."""
    lines = markdown.split("\n")
    headings = [
        (index, len(m.group(1)), m.group(2)) for index, line in enumerate(lines) if (m := SUBHEADING.match(line))
    ]
    if len(headings) < 2:
        return markdown
    level = min(depth for _, depth, _ in headings)
    siblings = [(index, title) for index, depth, title in headings if depth == level]
    words = [set(re.findall(r"[a-z]+", title.lower())) for _, title in siblings]
    systems = [bool(w & OPERATING_SYSTEMS) for w in words]
    first_words = {title.split()[0].lower().rstrip(":") for _, title in siblings}
    ways = (len(first_words) == 1 and first_words <= WAY_WORDS) or first_words == {"new", "existing"}
    if len(siblings) < 2 or not (all(systems) or ways):
        return markdown
    chosen = (
        next((n for n, w in enumerate(words) if {"linux", "ubuntu", "debian", "unix"} & w), 0) if all(systems) else 0
    )
    ends = [index for index, _ in siblings[1:]] + [len(lines)]
    keep = set(range(siblings[0][0]))
    keep |= set(range(siblings[chosen][0], ends[chosen]))
    return "\n".join(line for number, line in enumerate(lines) if number in keep)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# A block shown as a form to adapt ("using the syntax:", "usage:"), not something to type as is.
TEMPLATE_INTRO = re.compile(r"\b(?:syntax|usage|general form|signature|template|pattern)\b\s*:?\s*$", re.IGNORECASE)
# Prose that says the output shown is only an illustration of what the reader's machine prints.
HEDGED_OUTPUT = re.compile(
    r"\b(?:(?:output|result|path|it) (?:may|might|will|can) (?:have|differ|vary|look|be different)|"
    r"differs? (?:for|on|by|between) (?:each|every|your|the)|(?:something|output) (?:like|similar to)|"
    r"depending on your|may (?:differ|vary)|will (?:differ|vary))",
    re.IGNORECASE,
)
RUN_INTRO = re.compile(r"(?:\b(?:run|execute|type|enter|invoke|use)\b|\bcommand\b)[^.]*:\s*$", re.IGNORECASE)
# Commands that open an interactive shell inside an environment: what the page types next runs in there.
ENVIRONMENT_SHELL = re.compile(r"^\s*(?:hatch|poetry|pipenv|pdm|pixi|rye)\b[^|;&]*\bshell\s*$")
PROMPTED = re.compile(r"^\s*(?:\$|%|>>>|❯)\s")
PARAGRAPH_TARGET = re.compile(r"\b(?:to|in|into|inside) (?:your|the|a) `([^`\s]+)`(?: file)?", re.IGNORECASE)


def _read_content(content: str, plan: StepPlan):
    last_paragraph, last_runnable, ways_taken = "", None, 0
    parsed = tokens(content)
    for position, token in enumerate(parsed):
        if token.type == "inline":
            last_paragraph = token.content
            plan.backticked_paths += [
                span for span in re.findall(r"`([^`\s]+)`", token.content) if is_file_path(span) and "." in span
            ]
            continue
        if token.type not in ("fence", "code_block"):
            continue
        info = (token.info or "").strip() if token.type == "fence" else ""
        language = info_language(info)
        body = token.content
        if token.type == "code_block" and not body.lstrip().startswith(("$ ", "% ")):
            last_paragraph = ""
            continue  # an indented block without prompts is a listing (options, output), not something to type
        introduced_as_way = bool(ALTERNATIVE_INTRO.match(last_paragraph.strip()))
        alternative = (introduced_as_way and ways_taken > 0) or re.match(
            r"^\s*(?:or|alternatively)\b", last_paragraph, re.IGNORECASE
        )
        path, how = _file_target(info, last_paragraph, body)
        if not path and not _looks_like_shell(body) and not is_session(body) and language not in OUTPUT_LANGUAGES:
            target = PARAGRAPH_TARGET.search(last_paragraph)
            if target and is_file_path(target.group(1)) and language not in SHELL_LANGUAGES | PYTHON_LANGUAGES:
                path, how = target.group(1), "update"
        if TEMPLATE_INTRO.search(last_paragraph.strip()) and not path:
            plan.templates.append(_first_line(body))
            last_paragraph, last_runnable = "", None
            continue
        if (
            not language
            and not path
            and RUN_INTRO.search(last_paragraph.strip())
            and re.match(r"^[\w.-]+(?:\s|$)", body.strip())
            and "\n" not in body.strip()
        ):
            language = "bash"  # "You would run:" then an untagged one-line block: a command
        if alternative and not path and language not in OUTPUT_LANGUAGES:
            plan.skipped_alternatives.append(_first_line(body))
            last_paragraph, last_runnable = "", None
            continue
        if path:
            plan.actions.append(
                Action("file", body, path=path, append=how == "append", update=how == "update", language=language)
            )
            last_runnable = None
        elif language in OUTPUT_LANGUAGES or (not language and last_runnable and not _looks_like_shell(body)):
            if last_runnable is not None and last_runnable.expected_output is None:
                last_runnable.expected_output = None if _hedged(parsed, position) else body.strip()
        elif language in SHELL_LANGUAGES or (not language and _looks_like_shell(body)):
            commands, output = split_shell_lines(
                first_way_only(body, plan), console=language in {"console", "shell-session", "terminal"}
            )
            for command in commands:
                kind = "background" if is_server_command(command) else "command"
                plan.actions.append(Action(kind, command, language=language or "bash"))
            if plan.actions and commands:
                last_runnable = plan.actions[-1]
                if output and not _hedged(parsed, position):
                    last_runnable.expected_output = "\n".join(output)
        elif language in PYTHON_LANGUAGES or (not language and is_session(body)):
            if is_session(body):
                plan.actions += session_actions(body)
                last_runnable = None  # a session shows its own output
            else:
                plan.actions.append(Action("python", body, language="python"))
                last_runnable = plan.actions[-1]
        elif re.search(r"\b(add|put|paste|insert|append)\b", last_paragraph, re.IGNORECASE):
            plan.unplaced_blocks.append(f"{language or 'code'} block after “{last_paragraph.strip()[:80]}”")
        if introduced_as_way:
            ways_taken += 1
        last_paragraph = ""


def _hedged(parsed: list, position: int) -> bool:
    """The paragraph right after a block says its output is only an example of what the reader sees."""
    for token in parsed[position + 1 :]:
        if token.type in ("fence", "code_block", "heading_open"):
            return False
        if token.type == "inline":
            return bool(HEDGED_OUTPUT.search(token.content))
    return False


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:120]


def first_way_only(body: str, plan: StepPlan) -> str:
    """A shell block listing one way per tool, each under its own comment (`# npm`, `# yarn`, `# pnpm`): the
    reader types the first way. Anything else is returned whole."""
    groups = [group for group in re.split(r"\n\s*\n", body.strip()) if group.strip()]
    if len(groups) < 2 or not all(group.lstrip().startswith("#") for group in groups):
        return body
    tools = [next(iter(command_words(group)), "") for group in groups]
    if not all(tools) or len(set(tools)) < len(tools):
        return body
    plan.skipped_alternatives += [_first_line(re.sub(r"^\s*#.*\n", "", group)) for group in groups[1:]]
    return groups[0] + "\n"


def _looks_like_shell(body: str) -> bool:
    first = body.strip().splitlines()[0] if body.strip() else ""
    return first.startswith(("$ ", "% ")) or (
        command_words(first)[:1] and command_words(first)[0] in KNOWN_TOOLS | SHELL_BUILTINS
    )


def _file_target(info: str, paragraph: str, body: str) -> tuple[str | None, str]:
    """The file a block goes in, and how: "write" (create it), "append" or "update" (an edit when it exists)."""
    titled = re.search(r"(?:title|file|filename|path)\s*=\s*\"?([^\s\"}]+)", info)
    if titled and is_file_path(titled.group(1)):
        return titled.group(1), "update"
    if PROMPTED.match(body):
        return None, "write"  # what a reader types at a prompt, with its output: never a file's content
    sentence = re.split(r"(?<=[.!?])\s+", paragraph.strip())[-1] if paragraph.strip() else ""
    intro = FILE_INTRO.search(sentence)
    if intro and is_file_path(intro.group(2)) and not intro.group(2).startswith(("http", "-")):
        verb = intro.group(1).lower()
        return intro.group(2), "append" if verb in APPEND_VERBS else "update" if verb in UPDATE_VERBS else "write"
    if re.fullmatch(r"`[^`]+`\s*:?", sentence) and is_file_path(sentence.strip(":` ")):
        return sentence.strip(":` "), "update"
    return None, "write"


def _read_operations(operations: str, plan: StepPlan, path_for_lookup: str | None):
    shown = {_normalize(a.text) for a in plan.actions if a.kind in ("command", "background")}
    shown |= {_normalize(alternative) for alternative in plan.skipped_alternatives}  # not the way the reader took
    shown_blob = _normalize(" ".join(a.text for a in plan.actions))
    files = {a.path for a in plan.actions if a.kind == "file"}
    items = [item.strip() for item in OPS_ITEM.split(operations) if item.strip()]
    for item in items:
        for command in _commands_in_operation(item, path_for_lookup):
            plan.operation_commands.append(command)
            normalized = _normalize(command)
            if normalized in shown or normalized in shown_blob:
                continue
            shown.add(normalized)
            kind = "background" if is_server_command(command) else "command"
            plan.actions.append(Action(kind, command, source="operations"))
            plan.unshown_operations.append(command)
        for path in _files_in_operation(item):
            if path in files:
                continue
            files.add(path)
            block = next((a for a in plan.actions if a.kind == "python" and a.source == "content"), None)
            if block is not None and re.search(r"\b(shown|above|below|following|this|the code)\b", item, re.IGNORECASE):
                block.kind, block.path = "file", path
            else:
                plan.unwritable_files.append(path)


NOT_WORK = re.compile(
    r"^\s*(?:success indicators?|expected (?:output|result)|you should see|notes?|tips?|warning|caution|important)\b",
    re.IGNORECASE,
)


def _commands_in_operation(item: str, path_for_lookup: str | None) -> list[str]:
    if NOT_WORK.match(item):
        return []  # what the reader should see, or a remark: nothing to run
    found = []
    labelled = RUN_LABEL.search(item)
    if labelled:
        candidate = labelled.group(2).strip().strip("`")
        if looks_like_command(candidate, labelled=True, path=path_for_lookup):
            return [candidate.rstrip(".") if not candidate.endswith("..") else candidate]
    for span in re.findall(r"`([^`\n]+)`", item):
        if " " in span.strip() and looks_like_command(span, labelled=False):
            found.append(span.strip())
    if found:
        return found
    if ":" in item:
        after = item.split(":", 1)[1].strip()
        if looks_like_command(after, labelled=False):
            found.append(after.rstrip("."))
    return found


def _files_in_operation(item: str) -> list[str]:
    match = re.match(
        r"^(create|add|write|save)\b(?:\s+(?:a|the|new))?(?:\s+file)?(?:\s+(?:named|called))?\s+`?([^\s`,:]+)`?",
        item,
        re.IGNORECASE,
    )
    if match and is_file_path(match.group(2)) and "." in match.group(2).rsplit("/", 1)[-1]:
        return [match.group(2)]
    return []


def env_vars_used(action: Action) -> set[str]:
    if action.kind == "python":
        names = set(ENV_IN_PYTHON.findall(action.text))
    elif action.kind in ("command", "background"):
        names = set(ENV_IN_SHELL.findall(action.text)) - set(ENV_ASSIGNED.findall(action.text))
    else:
        return set()
    return {name for name in names if name not in STANDARD_ENV}
