"""How the validator reads an example of an extraction: whether it is run, in which style (a doctest session or a
script), the source it runs, the names it defines."""

import ast

from stackbench.docs import python_code
from stackbench.docs.distributions import readers_own
from stackbench.formats.walkthrough import CodeExample, SetupCode


def runnable(example: CodeExample) -> bool:
    """Not marked as an example nobody could run."""
    return example.execution_context != "not_executable"


def style_of(example: CodeExample) -> str:
    """The extractor says; for files of the existing tools, the code does."""
    if example.style:
        return example.style
    return "doctest" if python_code.is_session(example.code) else "script"


def as_read(example: CodeExample) -> CodeExample:
    """The example as its reader reads it: a script whose values are shown at prompts under its lines runs with
    those values as comments under them."""
    code = python_code.values_shown_at_prompts(example.code)
    return example if code is None else example.model_copy(update={"code": code, "style": "script"})


def source_of(example: CodeExample) -> str:
    return python_code.session_source(example.code) if style_of(example) == "doctest" else example.code


def names_in(example: CodeExample) -> set[str]:
    """Names an example that is not run would define (parsed leniently: placeholders may break parsing)."""
    tree = python_code.parse(source_of(example))
    return python_code.defined_names(tree) if tree is not None else set()


def readers_imports(example: CodeExample, page_modules: set[str]) -> set[str]:
    """Names an example imports from the reader's own code (`from myproject import users`), not from a module the
    page writes (page_modules): the page does not define them, it names what the reader has."""
    tree = python_code.parse(source_of(example))
    if tree is None:
        return set()
    return {
        name
        for name, module in python_code.imported_names(tree).items()
        if readers_own(module) and module.split(".")[0] not in page_modules
    }


def script_name(example: CodeExample, index: int) -> str:
    """The file name a script runs under in the sandbox."""
    return f"example_{index}_line_{example.line}.py"


def calls_print(tree: ast.Module | None) -> bool:
    """The example prints (so an output shown under it is what it prints)."""
    return tree is not None and any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
        for node in ast.walk(tree)
    )


def sets_up(setup: SetupCode, example: CodeExample) -> bool:
    """The docs' hidden setup has run by the time their own doctest run gets to the example: sphinx.ext.doctest
    runs a group's testsetup before the group's blocks, wherever it stands on the page ("*": every group); any
    other block gets the setup above it."""
    if setup.groups and example.doctest_groups:
        return (
            "*" in setup.groups
            or "*" in example.doctest_groups
            or bool(set(setup.groups) & set(example.doctest_groups))
        )
    return setup.line < example.line
