"""Rule-based extraction of code examples from a docs folder (markdown, MDX, reStructuredText), in the exact
extraction-analysis format of formats.md. Replaces the upstream LLM extraction agent for code examples.

For every code block: its language, the 1-based line where its code starts in the source file, the heading
it sits under and the full section hierarchy, the heading's anchor, its index on the page, the imports it
makes, how it runs (async when it awaits at top level; not executable for other languages, placeholders,
shell prompts and output), and the third-party packages it needs besides the library. Snippet includes
(`--8<-- "file"`, pymdown-extensions) are followed."""

import ast
import fnmatch
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from stackbench_site.lib.clock import utcnow
from stackbench_site.lib.markdown import info_language, tokens
from walkthroughs.engines.formats import CodeExample, ExtractionAnalysis
from walkthroughs.engines.python_code import awaits_at_top_level
from walkthroughs.engines.tutorial_text import PYTHON_LANGUAGES

DOC_SUFFIXES = (".md", ".mdx", ".markdown", ".rst")
MAX_DOC_BYTES = 2_000_000
SNIPPET = re.compile(r"""^(\s*)-{1,2}8<-{1,2}\s+["']([^"']+)["']\s*$""")
PLACEHOLDER = re.compile(
    r"<\s*(?:your|my)[\w .-]*>|<[A-Z][A-Z0-9_]{2,}>|\b(?:YOUR|MY)_[A-Z0-9_]+\b|\byour[-_]"
    r"(?:api[-_])?(?:key|token|secret|password)\b|\bREPLACE_ME\b"
)
PROMPT = re.compile(r"^\s*(?:\$|>>>|In \[\d+\]:)\s", re.MULTILINE)
# Import names whose package on PyPI is called something else.
PACKAGE_OF_MODULE = {
    "yaml": "PyYAML",
    "PIL": "Pillow",
    "sklearn": "scikit-learn",
    "cv2": "opencv-python",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "PyJWT",
    "attr": "attrs",
    "git": "GitPython",
    "magic": "python-magic",
    "docx": "python-docx",
    "serial": "pyserial",
    "Crypto": "pycryptodome",
    "google.protobuf": "protobuf",
    "skimage": "scikit-image",
    "zmq": "pyzmq",
}


def module_names_of(library: str) -> set[str]:
    """Import names a package is likely to be imported under (python-dateutil -> dateutil, PyYAML -> yaml)."""
    base = library.lower().replace("-", "_").replace(".", "_")
    names = {base, base.removeprefix("python_"), base.removesuffix("_python"), base.removeprefix("py")}
    names |= {module.lower() for module, package in PACKAGE_OF_MODULE.items() if package.lower() == library.lower()}
    return {n for n in names if n}


def slugify(text: str) -> str:
    """GitHub-style heading anchor."""
    text = re.sub(r"[`*_~\[\]()]", "", text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return re.sub(r"\s", "-", text)


@dataclass
class Block:
    language: str
    code: str
    line: int
    hierarchy: list[str]
    snippet_source: str | None = None


@dataclass
class ExtractionReport:
    analyses: list[tuple[str, ExtractionAnalysis]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _include_snippets(code: str, base: Path, docs_root: Path, depth: int = 0) -> tuple[str, str | None]:
    """Replace --8<-- "file[:start:end]" lines by the file's lines (relative to the docs root or the page)."""
    sources, lines = [], []
    for line in code.split("\n"):
        match = SNIPPET.match(line)
        if not match or depth > 3:
            lines.append(line)
            continue
        target, _, span = match.group(2).partition(":")
        candidates = [docs_root / target, base / target]
        found = next((c for c in candidates if c.is_file() and c.resolve().is_relative_to(docs_root.resolve())), None)
        if found is None:
            lines.append(line)
            continue
        included = found.read_text(encoding="utf-8", errors="replace").rstrip("\n").split("\n")
        if span and re.fullmatch(r"\d+:\d+", span):
            start, end = (int(x) for x in span.split(":"))
            included = included[start - 1 : end]
        nested, _ = _include_snippets("\n".join(included), found.parent, docs_root, depth + 1)
        lines.extend(match.group(1) + part for part in nested.split("\n"))
        sources.append(target)
    return "\n".join(lines), ", ".join(sources) or None


def markdown_blocks(text: str) -> list[Block]:
    blocks, stack = [], []
    parsed = tokens(text)
    for index, token in enumerate(parsed):
        if token.type == "heading_open":
            level = int(token.tag[1])
            title = parsed[index + 1].content.strip()
            stack = [item for item in stack if item[0] < level] + [(level, title)]
        elif token.type == "fence" and token.map:
            blocks.append(
                Block(info_language(token.info), token.content, token.map[0] + 2, [title for _, title in stack])
            )
    return blocks


RST_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+(?:code-block|code|sourcecode)::\s*(\S*)\s*$")
RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")


def rst_blocks(text: str) -> list[Block]:
    lines = text.split("\n")
    blocks, stack, underline_order = [], [], []
    index = 0
    while index < len(lines):
        line = lines[index]
        if (
            index + 1 < len(lines)
            and line.strip()
            and RST_UNDERLINE.match(lines[index + 1])
            and len(lines[index + 1].strip()) >= len(line.strip())
        ):
            char = lines[index + 1].strip()[0]
            if char not in underline_order:
                underline_order.append(char)
            level = underline_order.index(char) + 1
            stack = [item for item in stack if item[0] < level] + [(level, line.strip())]
            index += 2
            continue
        directive = RST_DIRECTIVE.match(line)
        if directive:
            indent = len(directive.group(1))
            index += 1
            while index < len(lines) and re.match(r"^\s+:\w[\w-]*:", lines[index]):
                index += 1  # directive options such as :linenos:
            while index < len(lines) and not lines[index].strip():
                index += 1
            start, body = index, []
            while index < len(lines) and (
                not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip()) > indent
            ):
                body.append(lines[index])
                index += 1
            while body and not body[-1].strip():
                body.pop()
            margin = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
            code = "\n".join(b[margin:] for b in body) + "\n"
            blocks.append(Block(directive.group(2).lower() or "python", code, start + 1, [t for _, t in stack]))
            continue
        index += 1
    return blocks


def _imports(tree: ast.Module | None) -> list[str]:
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return list(dict.fromkeys(found))


def _parse(code: str) -> ast.Module | None:
    try:
        return compile(code, "<example>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except (SyntaxError, ValueError):
        return None


def _has_ellipsis_placeholder(tree: ast.Module) -> bool:
    """`...` used as a value (Client(...), x = ...) marks a placeholder; a stub body (def f(): ...) does not."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis:
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Constant) and child.value is Ellipsis and not isinstance(node, ast.Expr):
                return True
    return False


def execution_context(language: str, code: str, tree: ast.Module | None) -> str:
    if language not in PYTHON_LANGUAGES or PROMPT.search(code) or PLACEHOLDER.search(code):
        return "not_executable"
    if tree is None:
        return "sync"  # a syntax error is worth reporting: validation will say where
    if _has_ellipsis_placeholder(tree):
        return "not_executable"
    return "async" if awaits_at_top_level(tree) else "sync"


def dependencies_of(imports: list[str], library: str) -> list[str]:
    own = module_names_of(library)
    packages = []
    for name in imports:
        top = name.split(".")[0]
        if top in sys.stdlib_module_names or top.lower() in own or top == "__future__":
            continue
        package = PACKAGE_OF_MODULE.get(name) or PACKAGE_OF_MODULE.get(top) or top
        if package.lower() != library.lower() and package not in packages:
            packages.append(package)
    return packages


def analyse_page(path: Path, docs_root: Path, library: str, version: str | None) -> ExtractionAnalysis | None:
    page = str(path.relative_to(docs_root).as_posix())
    text = path.read_text(encoding="utf-8")
    raw_blocks = rst_blocks(text) if path.suffix == ".rst" else markdown_blocks(text)
    examples = []
    for index, block in enumerate(raw_blocks):
        code, source = _include_snippets(block.code, path.parent, docs_root)
        if not code.strip():
            continue
        language = "python" if block.language in PYTHON_LANGUAGES else (block.language or "text")
        tree = _parse(code) if language == "python" else None
        imports = _imports(tree)
        heading = block.hierarchy[-1] if block.hierarchy else ""
        examples.append(
            CodeExample(
                library=library,
                language=language,
                code=code,
                imports=imports or None,
                has_main="__main__" in code,
                is_executable=True,
                execution_context=execution_context(block.language, code, tree),
                line=block.line,
                context=heading,
                dependencies=dependencies_of(imports, library),
                section_hierarchy=block.hierarchy,
                markdown_anchor=slugify(heading) if heading else None,
                code_block_index=index,
                snippet_source=source,
            )
        )
    for example in examples:
        example.is_executable = example.execution_context != "not_executable"
    if not examples:
        return None
    return ExtractionAnalysis(
        page=page, library=library, version=version, language="python", examples=examples, processed_at=utcnow()
    )


def extract_docs(docs: Path, library: str, version: str | None, include: str | None = None) -> ExtractionReport:
    docs = Path(docs)
    report = ExtractionReport()
    for path in sorted(p for p in docs.rglob("*") if p.is_file() and p.suffix.lower() in DOC_SUFFIXES):
        relative = path.relative_to(docs).as_posix()
        if include and not fnmatch.fnmatch(relative, include):
            continue
        if ".git" in path.parts or "node_modules" in path.parts:
            continue
        try:
            if path.stat().st_size > MAX_DOC_BYTES:
                report.warnings.append(f"{relative}: skipped, larger than {MAX_DOC_BYTES} bytes")
                continue
            if b"\0" in path.read_bytes()[:8000]:
                report.warnings.append(f"{relative}: skipped, not a text file")
                continue
            analysis = analyse_page(path, docs, library, version)
        except UnicodeDecodeError:
            report.warnings.append(f"{relative}: skipped, not UTF-8 text")
            continue
        except OSError as exc:
            report.warnings.append(f"{relative}: skipped, cannot read ({exc.strerror})")
            continue
        if analysis is not None:
            report.analyses.append((relative, analysis))
    return report
