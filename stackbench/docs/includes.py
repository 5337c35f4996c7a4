"""A docs page as its reader sees it: its include directives replaced by the text they include.

Understood: MyST's ```{include} and ```{literalinclude} (with :start-after:, :end-before:, :start-line:,
:end-line:, :lines: and :language:), MkDocs' snippets (`--8<-- "file"`, `--8<-- "file:start:end"`,
`--8<-- "file:section"`), markdown-include's `{!file!}`, and VuePress's, VitePress's and FastAPI-family code imports
(`@[code{2-9} python](./app.py)`, `<<< @/app.py#region`, `{* docs_src/app.py ln[3:9] *}`), shown as a fenced
block of the file. Included files are
looked up beside the page, then from the docs folder (which `@/` and `@source/` name), then from the project (the
docs folder's parent: where MkDocs runs, the snippets' and markdown-include's default base path), and must lie
inside the project; an include that cannot be read stays as it is. Every line of the result
remembers where it came from, so an example found in an included file is reported at its own file and line."""

import re
from dataclasses import dataclass
from pathlib import Path

MAX_DEPTH = 4
MAX_BYTES = 2_000_000
MYST_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*\{(include|literalinclude)\}\s*(\S+)\s*$")
OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*?)\s*$")
SNIPPET = re.compile(r"""^(\s*)-{1,2}8<-{1,2}\s+["']([^"']+)["']\s*$""")
MARKDOWN_INCLUDE = re.compile(r"^(\s*)\{!\s*([^!]+?)\s*!\}\s*$")
SECTION_MARK = re.compile(r"--8<--\s*\[(start|end):([\w-]+)\]")
# VuePress's `@[code{first-last} lang{highlight}](path)` and VitePress's `<<< path#region{highlight lang} [title]`.
VUEPRESS_CODE = re.compile(r"^(\s*)@\[code(?:\{([\d-]*)\})?(?:\s+([\w+#.-]+))?[^\]]*\]\(\s*([^)\s]+)\s*\)\s*$")
VITEPRESS_CODE = re.compile(r"^(\s*)<<<\s+([^\s#{\[]+)(?:#([\w-]+))?(?:\{([^}]*)\})?(?:\s*\[[^\]]*\])?\s*$")
# FastAPI-family docs' `{* ../../docs_src/app.py ln[3:9] hl[4] *}`: the file (or its ln[first:last] lines) as code.
CODE_INCLUDE = re.compile(r"^(\s*)\{\*\s*([^\s*]+)((?:\s+\w+\[[^\]]*\])*)\s*\*\}\s*$")
REGION_MARK = re.compile(r"^\s*(?:#|//|/\*|<!--|--|;)\s*#?(region|endregion)\b\s*([\w-]*)")


@dataclass(frozen=True)
class Origin:
    """Where a line of the expanded page comes from: a file (relative to the docs folder) and its line."""

    source: str
    line: int


@dataclass
class Expanded:
    text: str
    origins: list[Origin]  # one per line of text
    included: list[str]  # files included, relative to the docs folder

    def origin(self, line: int) -> Origin:
        """The origin of a 1-based line of the expanded text."""
        return self.origins[min(max(line, 1), len(self.origins)) - 1]


def expand(page: Path, docs_root: Path) -> Expanded:
    return _expand(page.read_text(encoding="utf-8"), page, docs_root.resolve(), 0)


def _expand(text: str, page: Path, docs_root: Path, depth: int, first_line: int = 1) -> Expanded:
    """Expand text, which is page's own text starting at its line first_line."""
    source = _relative(page, docs_root)
    lines = text.split("\n")
    out_lines: list[str] = []
    origins: list[Origin] = []
    included: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = MYST_FENCE.match(line)
        snippet = SNIPPET.match(line) or MARKDOWN_INCLUDE.match(line)
        if fence and depth < MAX_DEPTH:
            end, options = _directive_end(lines, index, fence.group(2))
            found = _find(fence.group(4), page, docs_root)
            if found is not None:
                body = _select(found, options)
                if fence.group(3) == "include":
                    nested = _expand("\n".join(body), found, docs_root, depth + 1, body_start(found, options))
                    out_lines += nested.text.split("\n")
                    origins += nested.origins
                    included += [_relative(found, docs_root), *nested.included]
                else:
                    language = options.get("language", _language_of(found))
                    out_lines.append(f"{fence.group(1)}{fence.group(2)}{language}")
                    origins.append(Origin(source, first_line + index))
                    first = body_start(found, options)
                    out_lines += body
                    origins += [Origin(_relative(found, docs_root), first + n) for n in range(len(body))]
                    out_lines.append(f"{fence.group(1)}{fence.group(2)}")
                    origins.append(Origin(source, first_line + end))
                    included.append(_relative(found, docs_root))
                index = end + 1
                continue
        imported = _code_import(line)
        if imported is not None:
            indent, target, language, span = imported
            found = _find(target, page, docs_root)
            if found is not None:
                body, first = _imported_lines(found, span)
                out_lines += [f"{indent}```{language or _language_of(found)}", *(indent + part for part in body)]
                out_lines.append(f"{indent}```")
                origins.append(Origin(source, first_line + index))
                origins += [Origin(_relative(found, docs_root), first + n) for n in range(len(body))]
                origins.append(Origin(source, first_line + index))
                included.append(_relative(found, docs_root))
                index += 1
                continue
        if snippet and depth < MAX_DEPTH:
            target, _, span = snippet.group(2).partition(":")
            found = _find(target, page, docs_root)
            if found is not None:
                body, first = _snippet_lines(found, span)
                nested = _expand("\n".join(body), found, docs_root, depth + 1, first)
                out_lines += [snippet.group(1) + part for part in nested.text.split("\n")]
                origins += nested.origins
                included += [_relative(found, docs_root), *nested.included]
                index += 1
                continue
        out_lines.append(line)
        origins.append(Origin(source, first_line + index))
        index += 1
    return Expanded("\n".join(out_lines), origins, included)


def unread_include(text: str) -> str | None:
    """The file of an include directive left in text (one that could not be read), if any."""
    for line in text.split("\n"):
        directive = SNIPPET.match(line) or MARKDOWN_INCLUDE.match(line)
        if directive:
            return directive.group(2).strip()
    return None


def _code_import(line: str) -> tuple[str, str, str, str] | None:
    """A VuePress, VitePress or FastAPI-family code import: its indentation, the file, the language it names ("" for the file's
    own) and the part it shows (VuePress's `first-last` line range, VitePress's `#region` name prefixed with `#`)."""
    vuepress = VUEPRESS_CODE.match(line)
    if vuepress:
        indent, lines, language, target = vuepress.groups()
        return indent, target, language or "", lines or ""
    vitepress = VITEPRESS_CODE.match(line)
    if vitepress:
        indent, target, region, braces = vitepress.groups()
        # VitePress's braces hold the lines to highlight, then maybe a language (`{1,3 python}`, `{py}`).
        named = [word for word in (braces or "").replace(",", " ").split() if not re.fullmatch(r"[\d-]+", word)]
        return indent, target, named[-1] if named else "", f"#{region}" if region else ""
    included = CODE_INCLUDE.match(line)
    if included:
        indent, target, options = included.groups()
        lines = re.search(r"\bln\[(\d*):(\d*)\]", options)  # one range shown; several show the whole file
        return indent, target, "", f"{lines.group(1)}-{lines.group(2)}" if lines else ""
    return None


def _from_docs_root(target: str) -> str | None:
    """The path inside the docs folder that VuePress's and VitePress's `@/x` and `@source/x` name."""
    for alias in ("@source/", "@/"):
        if target.startswith(alias):
            return target.removeprefix(alias)
    return None


def _imported_lines(path: Path, span: str) -> tuple[list[str], int]:
    """The lines a code import shows: whole, a `first-last` range (either end may be left out), or a region
    between `#region name` and `#endregion name` comments."""
    lines = _read_lines(path)
    if span.startswith("#"):
        chosen: list[str] = []
        inside, start = False, 1
        for number, line in enumerate(lines, start=1):
            mark = REGION_MARK.match(line)
            if mark and mark.group(2) in (span[1:], ""):
                if mark.group(1) == "region" and mark.group(2):
                    inside, start = True, number + 1
                    continue
                if inside and mark.group(1) == "endregion":
                    break
            if inside and not mark:
                chosen.append(line)
        return (chosen, start) if inside else (lines, 1)
    if span:
        first, dash, last = span.partition("-")
        start = int(first) if first.isdigit() else 1
        end = (int(last) if last.isdigit() else len(lines)) if dash else start
        return lines[start - 1 : end], start
    return lines, 1


def _directive_end(lines: list[str], start: int, marker: str) -> tuple[int, dict[str, str]]:
    """The closing fence's line of a directive, and its :options:."""
    options: dict[str, str] = {}
    index = start + 1
    while index < len(lines) and not lines[index].strip().startswith(marker):
        option = OPTION.match(lines[index])
        if option:
            options[option.group(1)] = option.group(2).strip("'\"")
        index += 1
    return index, options


def _find(target: str, page: Path, docs_root: Path) -> Path | None:
    project = docs_root.parent
    rooted = _from_docs_root(target)
    if rooted is not None:
        target, page = rooted, docs_root / "page"
    for base in (page.parent, docs_root, project):
        candidate = (base / target.strip()).resolve()
        if candidate.is_file() and candidate.is_relative_to(project) and candidate.stat().st_size <= MAX_BYTES:
            return candidate
    return None


def _read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").rstrip("\n").split("\n")


def _select(path: Path, options: dict[str, str]) -> list[str]:
    lines = _read_lines(path)
    start, end = body_start(path, options) - 1, len(lines)
    if "end-line" in options and options["end-line"].isdigit():
        end = int(options["end-line"])
    text_lines = lines[start:end]
    if "start-after" in options:
        text_lines = _after(text_lines, options["start-after"])
    if "end-before" in options:
        text_lines = _before(text_lines, options["end-before"])
    if "lines" in options:
        text_lines = _pick_lines(lines, options["lines"])
    return text_lines


def body_start(path: Path, options: dict[str, str]) -> int:
    """The 1-based line of the included file its included text starts on."""
    lines = _read_lines(path)
    start = int(options["start-line"]) + 1 if options.get("start-line", "").isdigit() else 1
    if "start-after" in options:
        marker = options["start-after"]
        for number, line in enumerate(lines[start - 1 :], start=start):
            if marker in line:
                return number + 1
    if "lines" in options:
        first = re.match(r"\s*(\d+)", options["lines"])
        return int(first.group(1)) if first else 1
    return start


def _after(lines: list[str], marker: str) -> list[str]:
    for number, line in enumerate(lines):
        if marker in line:
            return lines[number + 1 :]
    return lines


def _before(lines: list[str], marker: str) -> list[str]:
    for number, line in enumerate(lines):
        if marker in line:
            return lines[:number]
    return lines


def _pick_lines(lines: list[str], spec: str) -> list[str]:
    picked = []
    for part in spec.split(","):
        first, _, last = part.strip().partition("-")
        if first.isdigit():
            picked += lines[int(first) - 1 : int(last) if last.isdigit() else int(first)]
    return picked


def _snippet_lines(path: Path, span: str) -> tuple[list[str], int]:
    """A snippet's lines: whole, a start:end line range, or a named section."""
    lines = _read_lines(path)
    if re.fullmatch(r"-?\d*:-?\d*", span):
        first, _, last = span.partition(":")
        start = int(first) if first.lstrip("-").isdigit() else 1
        end = int(last) if last.lstrip("-").isdigit() else len(lines)
        return lines[start - 1 : end], start
    if span:
        chosen: list[str] = []
        inside, section_start = False, 1
        for number, line in enumerate(lines, start=1):
            mark = SECTION_MARK.search(line)
            if mark and mark.group(2) == span:
                inside = mark.group(1) == "start"
                section_start = number + 1 if inside else section_start
                continue
            if inside and not SECTION_MARK.search(line):
                chosen.append(line)
        return chosen, section_start
    return lines, 1


def _language_of(path: Path) -> str:
    return {
        ".py": "python",
        ".sh": "bash",
        ".js": "javascript",
        ".ts": "typescript",
        ".toml": "toml",
        ".yaml": "yaml",
        ".yml": "yaml",
        ".json": "json",
    }.get(path.suffix, "")


def _relative(path: Path, docs_root: Path) -> str:
    resolved = path.resolve()
    base = docs_root if resolved.is_relative_to(docs_root) else docs_root.parent
    prefix = "" if base == docs_root else "../"
    return prefix + resolved.relative_to(base).as_posix()
