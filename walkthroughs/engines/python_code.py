"""What a code example needs and how it must run, read from its syntax tree: the names it uses but does not
define, the earlier examples that define them, whether it awaits at top level, and the program that runs it
(merged with its dependencies, wrapped in asyncio.run when async), with a map back to the doc's lines."""

import ast
import builtins
from dataclasses import dataclass, field

BUILTIN_NAMES = set(dir(builtins)) | {"__name__", "__file__", "__doc__", "__builtins__", "__spec__", "__loader__"}
PARSE_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def parse(code: str) -> ast.Module | None:
    try:
        return compile(code, "<example>", "exec", flags=PARSE_FLAGS)
    except (SyntaxError, ValueError):
        return None


def _top_level_nodes(tree: ast.AST):
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
        elif isinstance(node, (ast.comprehension,)):
            continue
    return names


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


def undefined_names(tree: ast.Module) -> set[str]:
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return used - _locally_bound(tree) - BUILTIN_NAMES


def awaits_at_top_level(tree: ast.Module) -> bool:
    return any(isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)) for node in _top_level_nodes(tree))


def dependencies(index: int, trees: list[ast.Module | None]) -> list[int]:
    """Earlier examples this one needs, transitively, in order. A name defined by several earlier examples
    comes from the last one before the example that uses it."""
    needed: set[int] = set()
    pending = [index]
    while pending:
        current = pending.pop()
        tree = trees[current]
        if tree is None:
            continue
        for name in undefined_names(tree):
            for earlier in range(current - 1, -1, -1):
                if trees[earlier] is not None and name in defined_names(trees[earlier]):
                    if earlier not in needed:
                        needed.add(earlier)
                        pending.append(earlier)
                    break
    return sorted(needed)


@dataclass
class Program:
    """The code actually executed, and for each of its lines the example and doc line it came from."""

    code: str
    line_map: list[tuple[int, int] | None] = field(default_factory=list)  # per program line: (example, doc line)

    def doc_line(self, program_line: int) -> tuple[int, int] | None:
        if 1 <= program_line <= len(self.line_map):
            return self.line_map[program_line - 1]
        return None


def build_program(parts: list[tuple[int, str, int]], wrap_async: bool) -> Program:
    """Join (example index, code, doc line) parts in order. Async programs run the code inside
    `async def main()` driven by asyncio.run, as the spec shows."""
    lines: list[str] = []
    line_map: list[tuple[int, int] | None] = []

    def add(text: str, origin: tuple[int, int] | None, indent: str = ""):
        for offset, line in enumerate(text.splitlines() or [""]):
            lines.append(indent + line if line.strip() else line)
            line_map.append((origin[0], origin[1] + offset) if origin else None)

    if wrap_async:
        add("import asyncio", None)
        add("", None)
        add("async def main():", None)
        for index, code, doc_line in parts:
            add(code.rstrip("\n"), (index, doc_line), indent="    ")
        add("", None)
        add("asyncio.run(main())", None)
    else:
        for position, (index, code, doc_line) in enumerate(parts):
            if position:
                add("", None)
            add(code.rstrip("\n"), (index, doc_line))
    return Program("\n".join(lines) + "\n", line_map)
