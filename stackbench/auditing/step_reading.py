"""Reading one walkthrough step the way a newcomer would: what it tells them to do (commands, files to
write, Python to run, servers to start), what it promises they will see, and what it leaves unsaid.

The step's markdown (contentForUser) is what the reader sees; operationsForAgent is prose ("1. Create the
directory: mkdir app") that names the same work. Both are read; work only the operations name is done too,
and noted as never shown to the reader."""

import ast
import doctest
import re
from dataclasses import dataclass, field

from stackbench.auditing.step_pruning import (
    first_branch_only,
    first_line,
    first_tabs_only,
    first_way_only,
    placeholders,
)
from stackbench.docs.python_code import is_session, session_parts, session_source
from stackbench.docs.shell_words import (
    KNOWN_TOOLS,
    SHELL_BUILTINS,
    command_words,
    console_transcript,
    is_server_command,
    looks_like_command,
)
from stackbench.docs.tutorial_text import (
    ALTERNATIVE_INTRO,
    APPEND_VERBS,
    CONSOLE_LANGUAGES,
    CROSS_REFERENCE,
    ENV_ASSIGNED,
    ENV_IN_PYTHON,
    ENV_IN_SHELL,
    EXPECTED_OUTPUT,
    FILE_INTRO,
    HEDGED_OUTPUT,
    HYPOTHETICAL_INTRO,
    INSTRUCTION_VERBS,
    LINK,
    LOCAL_URL,
    MADE_FILES,
    NOT_WORK,
    OPS_ITEM,
    OR_INTRO,
    OUTPUT_INTRO,
    OUTPUT_LANGUAGES,
    PARAGRAPH_TARGET,
    PATH_TO_USE,
    PROMPTED,
    PYTHON_LANGUAGES,
    RUN_INTRO,
    RUN_LABEL,
    SAVED_AFTER,
    SHELL_LANGUAGES,
    SHOWN_STATE,
    STANDARD_ENV,
    TEMPLATE_INTRO,
    TREE_DRAWING,
    UPDATE_VERBS,
    VAGUE_PHRASES,
    VERIFICATION_CUES,
    WRITE_IMPERATIVE,
    is_file_path,
)
from stackbench.lib.markdown import info_language, tokens, without_fenced_blocks


@dataclass
class Action:
    kind: str  # command, background, file, compare (a file the page shows as made), tree (files shown), python
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
    paths_to_use: list[str] = field(default_factory=list)  # paths the text tells the reader to use
    skipped_alternatives: list[str] = field(default_factory=list)
    illustrations: list[str] = field(default_factory=list)  # commands shown as a what-if, not as a step
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


def defines_something(code: str) -> bool:
    """Untagged text that is Python defining or importing something (`def f(x): pass`): code shown, not output."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    # An assignment of a call's result (`person = bring(...)`) is code; `name = demo` may be printed settings.
    called = (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) for node in tree.body)
    return any(isinstance(node, kinds) for node in tree.body) or any(called)


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


def _normalize(command: str) -> str:
    return re.sub(r"\s+", " ", command.strip().rstrip(";")).strip()


def _strip_code_spans(text: str) -> str:
    return re.sub(r"`[^`]*`", "", text)


def read_step(step: dict, path_for_lookup: str | None = None) -> StepPlan:
    """Turn a step (as next_step serves it) into what a reader would do and what to check. Only the reader's
    text (contentForUser) makes promises and can be unclear; operations only add work the reader needs."""
    original = step.get("contentForUser") or ""
    content = first_branch_only(first_tabs_only(original))
    operations = step.get("operationsForAgent") or ""
    plan = StepPlan(reader_text=content)
    _read_content(content, plan)
    _read_operations(operations, plan, path_for_lookup, _normalize(original))
    prose = without_fenced_blocks(content)
    plan.expected_outputs += [m.group(1).strip() for m in EXPECTED_OUTPUT.finditer(prose)]
    # The addresses the text sends the reader to (or that the command line names): a sample of output listing
    # addresses is what a server printed, not a page to open.
    addresses = prose + "\n" + "\n".join(a.text for a in plan.actions if a.kind in ("command", "background"))
    plan.urls = list(dict.fromkeys(match.rstrip(".,;:)`") for match in LOCAL_URL.findall(addresses)))
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
            plan.placeholders += placeholders(action.text, prose)
    return plan


HTML_ONLY = re.compile(r"\s*(?:</?[A-Za-z][^>]*>\s*)+")


def _read_content(content: str, plan: StepPlan) -> None:
    last_paragraph, last_runnable, ways_taken = "", None, 0
    last_block: Action | None = None  # the code block just read, until a paragraph follows it
    parsed = tokens(content)
    for position, token in enumerate(parsed):
        if token.type == "inline" and HTML_ONLY.fullmatch(token.content):
            continue  # a wrapper tag (`<div class="termy">`) on its own line: layout, not prose
        if token.type == "inline":
            saved = SAVED_AFTER.match(token.content.strip())
            if saved and last_block is not None and is_file_path(saved.group(1)) and not last_block.path:
                # "Copy that to a file `main.py`": the block shown above is the file's content.
                last_block.kind, last_block.path, last_block.expected_output = "file", saved.group(1), None
                last_runnable = None
            last_block = None
            last_paragraph = token.content
            plan.paths_to_use += [
                span for span in PATH_TO_USE.findall(token.content) if is_file_path(span) and "." in span
            ]
            continue
        if token.type not in ("fence", "code_block"):
            continue
        last_block = None
        info = (token.info or "").strip() if token.type == "fence" else ""
        language = info_language(info)
        body = token.content
        if token.type == "code_block" and not body.lstrip().startswith(("$ ", "% ")):
            last_paragraph = ""
            continue  # an indented block without prompts is a listing (options, output), not something to type
        intro = last_paragraph.strip()
        if not language and defines_something(body):
            last_runnable = None  # code shown between a block and what follows: later text is not its output
        if language not in PYTHON_LANGUAGES and (
            TREE_DRAWING.search(body)
            or (OUTPUT_INTRO.search(intro) and (PROMPTED.match(body) or not _file_shown(intro)))
        ):
            # What the reader will see (a tree of files, a server's banner), whatever the fence says.
            if last_runnable is not None and last_runnable.expected_output is None and not TREE_DRAWING.search(body):
                last_runnable.expected_output = None if _hedged(parsed, position) else body.strip()
            if TREE_DRAWING.search(body) and MADE_FILES.search(_last_sentence(intro)) and not _hedged(parsed, position):
                # The files the steps so far made, as the page shows them: compared with the reader's folder.
                plan.actions.append(Action("tree", body))
            last_paragraph, last_runnable = "", None
            continue
        if HYPOTHETICAL_INTRO.match(_last_sentence(intro)):
            plan.illustrations.append(first_line(body))
            last_paragraph, last_runnable = "", None
            continue
        introduced_as_way = bool(ALTERNATIVE_INTRO.match(last_paragraph.strip()))
        alternative = (introduced_as_way and ways_taken > 0) or OR_INTRO.match(last_paragraph)
        path, how = _file_target(info, last_paragraph, body)
        if not path and not PROMPTED.match(body):
            path = _file_shown(last_paragraph)
        if not path and not _looks_like_shell(body) and not is_session(body) and language not in OUTPUT_LANGUAGES:
            target = PARAGRAPH_TARGET.search(last_paragraph)
            if target and is_file_path(target.group(1)) and language not in SHELL_LANGUAGES | PYTHON_LANGUAGES:
                path, how = target.group(1), "update"
        if TEMPLATE_INTRO.search(last_paragraph.strip()) and not path:
            plan.templates.append(first_line(body))
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
            plan.skipped_alternatives.append(first_line(body))
            last_paragraph, last_runnable = "", None
            continue
        if path and _shows_state(last_paragraph):
            plan.actions.append(Action("compare", body, path=path, language=language))
            last_runnable = None
        elif path:
            plan.actions.append(
                Action("file", body, path=path, append=how == "append", update=how == "update", language=language)
            )
            last_runnable = None
        elif language in OUTPUT_LANGUAGES or (
            not language and last_runnable and not _looks_like_shell(body) and not defines_something(body)
        ):
            if last_runnable is not None and last_runnable.expected_output is None:
                last_runnable.expected_output = None if _hedged(parsed, position) else body.strip()
        elif language in SHELL_LANGUAGES or (not language and _looks_like_shell(body)):
            first_way, skipped = first_way_only(body)
            plan.skipped_alternatives += skipped
            hedged = _hedged(parsed, position)
            # Each command with the output shown under it: a transcript of several commands shows each one's.
            for command, shown in console_transcript(first_way, console=language in CONSOLE_LANGUAGES):
                if not command:
                    continue
                kind = "background" if is_server_command(command) else "command"
                expected = "\n".join(shown) if shown and not hedged else None
                plan.actions.append(Action(kind, command, language=language or "bash", expected_output=expected))
                last_runnable = plan.actions[-1]
        elif language in PYTHON_LANGUAGES or (not language and is_session(body)):
            if is_session(body):
                plan.actions += session_actions(body)
                last_runnable = None  # a session shows its own output
            else:
                plan.actions.append(Action("python", body, language="python"))
                last_runnable = last_block = plan.actions[-1]
        elif re.search(r"\b(add|put|paste|insert|append)\b", last_paragraph, re.IGNORECASE):
            plan.unplaced_blocks.append(f"{language or 'code'} block after “{last_paragraph.strip()[:80]}”")
        if introduced_as_way:
            ways_taken += 1
        last_paragraph = ""


def _shows_state(paragraph: str) -> bool:
    """The paragraph presents what a file holds (after a tool made it) without telling the reader to write it."""
    sentence = _last_sentence(paragraph)
    return bool(SHOWN_STATE.search(sentence)) and not WRITE_IMPERATIVE.match(sentence)


def _file_shown(paragraph: str) -> str | None:
    """The file a paragraph presents the state of ("your `app.toml` now looks like this:"), if any."""
    if not _shows_state(paragraph):
        return None
    return next((span for span in re.findall(r"`([^`\s]+)`", _last_sentence(paragraph)) if is_file_path(span)), None)


def _last_sentence(paragraph: str) -> str:
    return re.split(r"(?<=[.!?])\s+", paragraph.strip())[-1] if paragraph.strip() else ""


TREE_ENTRY = re.compile(r"^((?:[│|]\s*|\s)*)[├└]──?\s*(.+?)\s*$")


def tree_paths(tree: str) -> list[str]:
    """The paths a drawn tree shows, relative to its root ("." or a folder named on the first line), each entry's
    folder found by how deep it is drawn; comments after an entry (`# config`) are not part of its name."""
    root = ""
    paths: list[str] = []
    stack: list[tuple[int, str]] = []  # (indent, path) of the folders above the current entry
    for line in tree.splitlines():
        entry = TREE_ENTRY.match(line)
        if entry is None:
            name = line.strip()
            if not paths and name and name not in (".", "./") and not stack and "─" not in name:
                root = name.rstrip("/") + "/"
            continue
        indent, name = len(entry.group(1)), re.split(r"\s+(?:#|//|<-|←)", entry.group(2))[0].strip().rstrip("/")
        if not name or name in ("...", "…"):
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = (stack[-1][1] + "/" if stack else root) + name
        paths.append(path)
        stack.append((indent, path))
    return paths


def _hedged(parsed: list, position: int) -> bool:
    """The paragraph right after a block says its output is only an example of what the reader sees."""
    for token in parsed[position + 1 :]:
        if token.type in ("fence", "code_block", "heading_open"):
            return False
        if token.type == "inline":
            return bool(HEDGED_OUTPUT.search(token.content))
    return False


def _looks_like_shell(body: str) -> bool:
    first = body.strip().splitlines()[0] if body.strip() else ""
    return first.startswith(("$ ", "% ")) or (
        bool(command_words(first)) and command_words(first)[0] in KNOWN_TOOLS | SHELL_BUILTINS
    )


def _file_target(info: str, paragraph: str, body: str) -> tuple[str | None, str]:
    """The file a block goes in, and how: "write" (create it), "append" or "update" (an edit when it exists)."""
    titled = re.search(r"(?:title|file|filename|path)\s*=\s*\"?([^\s\"}]+)", info)
    if titled and is_file_path(titled.group(1)):
        return titled.group(1), "update"
    if PROMPTED.match(body):
        return None, "write"  # what a reader types at a prompt, with its output: never a file's content
    sentence = re.split(r"(?<=[.!?])\s+", paragraph.strip())[-1] if paragraph.strip() else ""
    # A link after the file's name ("add a [`theme`](…) setting") is words to the reader, not another name.
    sentence = re.sub(r"\[([^\]]*)\]\([^)]*\)", lambda link: link.group(1).replace("`", ""), sentence)
    intro = FILE_INTRO.search(sentence)
    if intro and is_file_path(intro.group(2)) and not intro.group(2).startswith(("http", "-")):
        verb = intro.group(1).lower()
        return intro.group(2), "append" if verb in APPEND_VERBS else "update" if verb in UPDATE_VERBS else "write"
    if re.fullmatch(r"`[^`]+`\s*:?", sentence) and is_file_path(sentence.strip(":` ")):
        return sentence.strip(":` "), "update"
    return None, "write"


def _read_operations(operations: str, plan: StepPlan, path_for_lookup: str | None, whole_page: str = "") -> None:
    """Work the operations name that the reader's text does not show. A command the page shows in a way the
    reader does not take (another tab, another system's section) is that way, skipped, not extra work."""
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
            if normalized in whole_page:
                plan.skipped_alternatives.append(command)
                shown.add(normalized)
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
