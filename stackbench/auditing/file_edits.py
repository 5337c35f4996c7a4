"""What "update `app.py`" means when a step shows a block for a file that already exists: the whole file when
the block is one (it starts as a file starts, or is most of the old one), otherwise an edit a careful reader
makes: in Python, definitions replaced by name and new imports put at the top; in JSON, objects merged by key;
in anything else, the block added at the end. The auditor says which it did, so a reader of the audit can tell."""

import ast
import json
import re

WHOLE_FILE_START = re.compile(
    r"^(?:import\s|from\s+\S+\s+import\s|['\"]use (?:client|server|strict)['\"]|<!DOCTYPE|<html|#!|package\s)"
)


def apply_edit(existing: str, block: str, path: str) -> tuple[str, str]:
    """(new file text, what was done: "replaced", "merged" or "appended")."""
    if path.endswith(".json"):
        merged_json = _merge_json(existing, block)
        if merged_json is not None:
            return merged_json, "merged"
    if path.endswith((".toml", ".ini", ".cfg")) and SECTION.search(block):
        old_tables = {header for header, _ in _sections(existing) if header}
        if old_tables <= {header for header, _ in _sections(block) if header}:
            return block, "replaced"
        return _merge_sections(existing, block), "merged"
    if is_whole_file(existing, block, path):
        return block, "replaced"
    if path.endswith(".py"):
        merged = _merge_python(existing, block)
        if merged is not None:
            return merged, "merged"
    separator = "" if existing.endswith("\n") or not existing else "\n"
    return existing + separator + block, "appended"


def is_whole_file(existing: str, block: str, path: str) -> bool:
    """The block is the file: in Python, it defines everything the old file did and keeps its other statements;
    elsewhere, it starts as files start (imports, a shebang, a doctype) or is most of the old file's length."""
    old = [line for line in existing.splitlines() if line.strip()]
    new = [line for line in block.splitlines() if line.strip()]
    if not old or not new:
        return True
    if path.endswith(".py"):
        try:
            old_tree, new_tree = ast.parse(existing), ast.parse(block)
            return _names(old_tree) <= _names(new_tree) and _unnamed(old_tree) <= _unnamed(new_tree)
        except SyntaxError:
            pass
    return bool(WHOLE_FILE_START.match(new[0])) or len(new) >= 0.6 * len(old)


def _names(tree: ast.Module) -> set[str]:
    return {name for node in tree.body if (name := _defined_name(node))}


def _unnamed(tree: ast.Module) -> int:
    """Statements that define nothing by name (calls, `if __name__ == ...`): a whole file keeps them."""
    return sum(
        1 for node in tree.body if _defined_name(node) is None and not isinstance(node, ast.Import | ast.ImportFrom)
    )


def _merge_python(existing: str, block: str) -> str | None:
    try:
        old_tree, new_tree = ast.parse(existing), ast.parse(block)
    except SyntaxError:
        return None
    old_lines, new_lines = existing.splitlines(), block.splitlines()
    replaced: dict[int, tuple[int, list[str]]] = {}  # first line of an old definition -> (its end, new text)
    imports, appended = [], []
    for node in new_tree.body:
        text = new_lines[_first_line(node) - 1 : node.end_lineno]
        if isinstance(node, ast.Import | ast.ImportFrom):
            if "\n".join(text) not in existing:
                imports += text
            continue
        match = _same_definition(old_tree, node)
        if match is not None and match.end_lineno is not None:
            replaced[_first_line(match)] = (match.end_lineno, text)
        else:
            appended += ["", *text]
    result, index = [], 1
    while index <= len(old_lines):
        if index in replaced:
            end, text = replaced[index]
            result += text
            index = end + 1
        else:
            result.append(old_lines[index - 1])
            index += 1
    return "\n".join(imports + result + appended) + "\n"


ELISION = re.compile(r"^\s*(?://\s*)?(?:\.\.\.|…)\s*,?\s*$", re.MULTILINE)


def _merge_json(existing: str, block: str) -> str | None:
    """A JSON block added to a JSON file ("add this section to `package.json`", its `...` standing for the rest)
    merges by key, objects into objects, as a reader edits it; None when either is not a JSON object."""
    shown = re.sub(r",(\s*[}\]])", r"\1", ELISION.sub("", block))
    try:
        old, new = json.loads(existing), json.loads(shown)
    except ValueError:
        return None
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    return json.dumps(_merged(old, new), indent=2, ensure_ascii=False) + "\n"


def _merged(old: dict, new: dict) -> dict:
    result = dict(old)
    for key, value in new.items():
        result[key] = (
            _merged(result[key], value) if isinstance(value, dict) and isinstance(result.get(key), dict) else value
        )
    return result


SECTION = re.compile(r"^\s*\[\[?([^\]]+)\]\]?\s*$", re.MULTILINE)


def _sections(text: str) -> list[tuple[str | None, list[str]]]:
    """(header, lines) in order; the lines before the first header have no header."""
    sections: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        header = SECTION.match(line)
        if header and not line.lstrip().startswith("[["):
            sections.append((header.group(1).strip(), [line]))
        else:
            sections[-1][1].append(line)
    return sections


def _merge_sections(existing: str, block: str) -> str:
    """A TOML or INI block edits tables: a table the file has is replaced, a new one is added; declaring a
    table twice is an error in TOML, so a reader never appends one."""
    old, new = _sections(existing), _sections(block)
    replacements: dict[str | None, list[str]] = {header: lines for header, lines in new if header is not None}
    merged = []
    for header, lines in old:
        merged.append((header, replacements.pop(header, lines)))
    merged += [(header, lines) for header, lines in new if header in replacements]
    if new[0][1] and any(line.strip() for line in new[0][1]):
        merged[0] = (None, merged[0][1] + new[0][1])
    text = "\n\n".join("\n".join(lines).strip("\n") for _, lines in merged if "".join(lines).strip())
    return text.strip("\n") + "\n"


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(decorator.lineno for decorator in decorators)])


def _same_definition(tree: ast.Module, node: ast.stmt) -> ast.stmt | None:
    name = _defined_name(node)
    if name is None:
        return None
    return next((old for old in tree.body if _defined_name(old) == name and type(old) is type(node)), None)


def _defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None
