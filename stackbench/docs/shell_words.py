"""How a shell command line is read: the commands of a shell block and the words they split into, the programs a
line runs and the functions it defines, and what kind of command it is (a server that keeps running, a setup that
only arranges files, a command at all rather than prose). The words shell commands are known by are here too."""

import html
import re
import shlex
import shutil

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
# Tools a newcomer who lacks them installs from a package index before going on: the command that does it.
INSTALL_FOR_TOOL = {
    "uv": "python3 -m pip install --quiet uv",
    "uvx": "python3 -m pip install --quiet uv",
    "pipx": "python3 -m pip install --quiet pipx",
    "poetry": "python3 -m pip install --quiet poetry",
    "pdm": "python3 -m pip install --quiet pdm",
    "hatch": "python3 -m pip install --quiet hatch",
    "tox": "python3 -m pip install --quiet tox",
    "nox": "python3 -m pip install --quiet nox",
    "pytest": "python3 -m pip install --quiet pytest",
    "ruff": "python3 -m pip install --quiet ruff",
    "black": "python3 -m pip install --quiet black",
    "mypy": "python3 -m pip install --quiet mypy",
    "mkdocs": "python3 -m pip install --quiet mkdocs",
    "sphinx-build": "python3 -m pip install --quiet sphinx",
    "sphinx-quickstart": "python3 -m pip install --quiet sphinx",
    "cookiecutter": "python3 -m pip install --quiet cookiecutter",
    "copier": "python3 -m pip install --quiet copier",
    "pre-commit": "python3 -m pip install --quiet pre-commit",
    "twine": "python3 -m pip install --quiet twine",
    "flask": "python3 -m pip install --quiet flask",
    "django-admin": "python3 -m pip install --quiet django",
    "yarn": "npm install --global --silent yarn",
    "pnpm": "npm install --global --silent pnpm",
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
# Commands that open an interactive shell inside an environment: what the page types next runs in there.
ENVIRONMENT_SHELL = re.compile(r"^\s*(?:hatch|poetry|pipenv|pdm|pixi|rye)\b[^|;&]*\bshell\s*$")
# Shell grammar, not programs: words after these are commands; segments starting with those run nothing.
COMMAND_PREFIXES = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "("}
NOT_A_COMMAND = {"for", "case", "select", "function", "done", "fi", "esac", "}", ")", "in"}
FUNCTION_HEADER = re.compile(r"(?:\bfunction\s+([\w.:-]+)\s*(?:\(\))?|([\w.:-]+)\s*\(\))\s*\{")
SHELL_ALIAS = re.compile(r"(?:^|[\s;&|])alias\s+([\w.:-]+)=")
# The second word of a sentence, not of a command ("Make sure …", "Run it …").
PROSE_SECOND_WORDS = {"sure", "it", "the", "a", "an", "your", "this", "that", "certain", "that's", "sure,", "of", "is"}


def shell_segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line, as words, split where the shell splits them (`;`, `&&`, `||`,
    `|`, `&`, parentheses, newlines) and never inside quotes: `python -c "a; b"` is one command."""
    lexer = shlex.shlex(command.replace("\\\n", " "), posix=True, punctuation_chars=";&|()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    segments: list[list[str]] = []
    current: list[str] = []
    try:
        for token in lexer:
            if token and set(token) <= set(";&|()\n") or token == "\n":
                if current:
                    segments.append(current)
                current = []
            else:
                current.append(token)
    except ValueError:
        return [line.split() for line in command.splitlines() if line.split()]
    if current:
        segments.append(current)
    return segments


def split_shell_lines(block: str, console: bool = False) -> tuple[list[str], list[str]]:
    """Commands of a shell block, joining continuations, heredocs and unbalanced quotes. In console blocks
    only prompted lines ($ or >) are commands; the rest is expected output."""
    transcript = console_transcript(block, console)
    return [command for command, _ in transcript if command], [line for _, shown in transcript for line in shown]


# A console transcript's narration (termynal-style `// now check the help`) and markup in shown output.
NARRATION = re.compile(r"^//\s")
OUTPUT_MARKUP = re.compile(r"</?(?:b|i|u|em|strong|span|font|kbd|code)\b[^>]*>", re.IGNORECASE)


def console_transcript(block: str, console: bool = False) -> list[tuple[str, list[str]]]:
    """A shell block as (command, the output shown under it) pairs in order; output shown before the first
    command comes with an empty command. Narration lines and markup in the output are not what a reader sees
    printed, so they are left out."""
    transcript: list[tuple[str, list[str]]] = [("", [])]
    current, heredoc_end = "", None
    marked_up = bool(OUTPUT_MARKUP.search(block))  # output written as HTML (tags, `&apos;`) is read as shown
    for raw in block.splitlines():
        line = raw.rstrip()
        if heredoc_end is not None:
            current += "\n" + raw
            if line.strip() == heredoc_end:
                transcript.append((current, []))
                current, heredoc_end = "", None
            continue
        stripped = line.strip()
        if not current:
            prompted = re.match(r"^(?:\$|%|>|❯|#\s*\$)\s+(.*)$", stripped)
            if console or block.lstrip().startswith(("$ ", "% ")):
                if not prompted:
                    shown = html.unescape(OUTPUT_MARKUP.sub("", line)).strip() if marked_up else line.strip()
                    if shown and not NARRATION.match(stripped):
                        transcript[-1][1].append(shown)
                    continue
                stripped = prompted.group(1)
            elif prompted:
                stripped = prompted.group(1)
            if not stripped or stripped.startswith("#"):
                continue
            current = stripped
        else:
            current += "\n" + stripped
        heredoc = re.search(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?", current)
        if heredoc and current.count("\n") == 0:
            heredoc_end = heredoc.group(1)
            continue
        if current.endswith("\\"):
            current = current[:-1].rstrip() + " "
            continue
        try:
            shlex.split(current)
        except ValueError:
            continue
        transcript.append((current.strip(), []))
        current = ""
    if current.strip():
        transcript.append((current.strip(), []))
    return transcript if transcript[0][1] else transcript[1:]


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


def python_files_run(command: str) -> list[tuple[str, list[str]]]:
    """The programs of a command line that are given Python files, each with those files (`tool inventory.py
    deploy.py` -> ("tool", ["inventory.py", "deploy.py"])): a program that takes the reader's files by name runs
    them itself. A `name=value` argument is a value given to the program, not a file it runs."""
    found = []
    for parts in shell_segments(command):
        while parts and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", parts[0]):
            parts.pop(0)
        if parts and parts[0] in {"sudo", "time", "nohup", "exec", "command"}:
            parts.pop(0)
        files = [word for word in parts[1:] if word.endswith(".py") and "=" not in word]
        if parts and files:
            found.append((parts[0], files))
    return found
