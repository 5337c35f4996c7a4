"""How a tutorial's text is read, wherever it is read (the generator turning a page into steps, the auditor
following a step): which fences hold shell commands, Python or output; which sentence before a block names the
file it goes in; and how a shell block splits into the commands a reader types."""

import re
import shlex

SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh", "shell-session", "terminal", "shellsession", "cmd"}
PYTHON_LANGUAGES = {"python", "py", "python3", "pycon", "ipython", "doctest"}
OUTPUT_LANGUAGES = {"text", "txt", "output", "plaintext", "plain", "log", "stdout"}
# "Create `x`", "save this as `x`", "copy that to a file `x`", "in `settings.py`": the file a block goes in.
FILE_INTRO = re.compile(
    r"\b(create|update|add|save|edit|write|open|modify|put|change|replace|make|paste|append|insert|in|copy|"
    r"as|named|called|to)\b"
    r"[^`\n]{0,60}`([^`\s]+)`[^`\n]{0,40}$",
    re.IGNORECASE,
)
APPEND_VERBS = {"add", "append", "insert", "paste"}
UPDATE_VERBS = {"update", "edit", "modify", "change", "replace", "open", "in", "to"}
# A path a shell accepts: folders and a file with an extension, or folders ending in a slash. Next.js-style
# segments (`app/artist/[username]/page.tsx`, `(group)`) are paths too.
_SEGMENT = r"[\w.@~\[\]()+-]"
PATH_LIKE = re.compile(
    rf"^(?!https?://)(?:{_SEGMENT}+/)*[\w@\[(-]{_SEGMENT}*\.[A-Za-z0-9]{{1,8}}$|^(?:{_SEGMENT}+/)+{_SEGMENT}+/?$"
)
# Extensions of files people write in tutorials; a dotted identifier (`str.format`, `Promise.all`,
# `project.name`) is not a file.
FILE_EXTENSION = re.compile(
    r"\.(?:py|pyi|toml|cfg|ini|txt|md|rst|json|ya?ml|lock|[mc]?js|tsx?|jsx|vue|svelte|astro|html?|css|s[ac]ss|less|"
    r"env|sh|bash|zsh|ps1|bat|sql|db|sqlite3?|[ct]sv|xml|svg|png|jpe?g|gif|ico|webp|go|rs|rb|php|java|kt|swift|"
    r"[ch]|[ch]pp|cs|mod|sum|gradle|properties|conf|log|ipynb|j2|jinja|hbs|ejs|pug|twig|prisma|graphql|proto|tf|"
    r"lua|r|pl|exs?|erl|hs|ml|dart|zig|nim|cr|jl)$|(?:^|/)(?:Dockerfile|Makefile|Procfile)$",
    re.IGNORECASE,
)
# Introductions of a block that is one of several ways to do the same thing ("With Yarn:", "Using pnpm",
# "Alternatively, …", "Or with Docker:"): a reader follows the first way only.
ALTERNATIVE_INTRO = re.compile(
    r"^\s*(?:(?:or|alternatively),?\s+(?:\w+\s+){0,6}|(?:with|using|via|for)\s+[\w.+ /-]{1,30}:?\s*$)",
    re.IGNORECASE,
)


def is_file_path(text: str) -> bool:
    """A path a reader could create: shell-accepted folders and a name with a file extension (or a folder)."""
    if not PATH_LIKE.match(text):
        return False
    name = text.rstrip("/").rsplit("/", 1)[-1]
    if text.endswith("/") or ("/" in text and "." not in name):
        return True
    return FILE_EXTENSION.search(text) is not None


def shell_segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line, as words, split where the shell splits them (`;`, `&&`, `||`,
    `|`, `&`, parentheses, newlines) and never inside quotes: `python -c "a; b"` is one command."""
    lexer = shlex.shlex(command.replace("\\\n", " "), posix=True, punctuation_chars=";&|()\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = "#"
    segments, current = [], []
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
    commands, output, current, heredoc_end = [], [], "", None
    for raw in block.splitlines():
        line = raw.rstrip()
        if heredoc_end is not None:
            current += "\n" + raw
            if line.strip() == heredoc_end:
                commands.append(current)
                current, heredoc_end = "", None
            continue
        stripped = line.strip()
        if not current:
            prompted = re.match(r"^(?:\$|%|>|❯|#\s*\$)\s+(.*)$", stripped)
            if console or block.lstrip().startswith(("$ ", "% ")):
                if not prompted:
                    if stripped:
                        output.append(stripped)
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
        commands.append(current.strip())
        current = ""
    if current.strip():
        commands.append(current.strip())
    return commands, output
