"""How a tutorial's text is read, wherever it is read (the generator turning a page into steps, the auditor
following a step): which fences hold shell commands, Python or output; which sentence before a block names the
file it goes in; and how a shell block splits into the commands a reader types."""

import re
import shlex

SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh", "shell-session", "terminal", "shellsession", "cmd"}
PYTHON_LANGUAGES = {"python", "py", "python3", "pycon", "ipython"}
OUTPUT_LANGUAGES = {"text", "txt", "output", "plaintext", "plain", "log", "stdout"}
FILE_INTRO = re.compile(
    r"\b(create|update|add|save|edit|write|open|modify|put|change|replace|make|paste|append|insert|in)\b"
    r"[^`\n]{0,60}`([^`\s]+)`[^`\n]{0,40}$",
    re.IGNORECASE,
)
APPEND_VERBS = {"add", "append", "insert", "paste"}
PATH_LIKE = re.compile(r"^(?!https?://)(?:[\w.@~-]+/)*[\w@-][\w.@-]*\.[A-Za-z0-9]{1,8}$|^(?:[\w.@~-]+/)+[\w.@-]+/?$")


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
