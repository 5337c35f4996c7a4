import json

import pytest

from stackbench.docs.distributions import module_names_of
from stackbench.docs.extractor import doc_pages, extract_docs, shell_requirements

GUIDE = """---
title: Guide
---
# Guide

Intro.

## Install

```bash
pip install toolz
```

## Currying

Text before: fetch with requests, read with PyYAML.

```python
from toolz import curry
import requests
import yaml
```

### Async use

```py
import asyncio
await asyncio.sleep(0)
```

```python
client = Client(api_key="<your-key>")
```

```python
result = compose(...)
```

```python
>>> 1 + 1
2
```

```python
def stub(): ...

stub()
```

#### Included

```python
--8<-- "snippets/helper.py"
```
"""

COMPONENT_MDX = """import Tabs from '@theme/Tabs';

# Components

<Tabs>

```python
from toolz import pipe
print(pipe(1, str))
```

</Tabs>
"""

API_RST = """API reference
=============

Pipes
-----

Use it like this:

.. code-block:: python
   :linenos:

   from toolz import pipe

   pipe(1, str)

Nested
~~~~~~

.. code:: python

   async with session() as s:
       pass
"""


@pytest.fixture
def docs(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "snippets").mkdir()
    (tmp_path / "guide" / "intro.md").write_text(GUIDE)
    (tmp_path / "components.mdx").write_text(COMPONENT_MDX)
    (tmp_path / "api.rst").write_text(API_RST)
    (tmp_path / "prose.md").write_text("# Just words\n\nNo code here.\n")
    (tmp_path / "snippets" / "helper.py").write_text("def helper():\n    return 1\n")
    (tmp_path / "binary.md").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "latin1.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    return tmp_path


def pages(report):
    return dict(report.analyses)


def test_the_pages_read_are_the_docs_files_matching_the_glob_outside_git_folders(docs):
    (docs / ".git").mkdir()
    (docs / ".git" / "notes.md").write_text("# not docs\n")
    (docs / "snippets" / "notes.txt").write_text("not a page\n")
    names = [page.relative_to(docs).as_posix() for page in doc_pages(docs)]
    assert names == ["api.rst", "binary.md", "components.mdx", "guide/intro.md", "latin1.md", "prose.md"]
    assert [page.name for page in doc_pages(docs, include="guide/*.md")] == ["intro.md"]


def test_each_page_read_moves_the_progress_on_once_even_a_skipped_one(docs):
    moves = []
    report = extract_docs(docs, "toolz", "0.12.1", on_page=lambda: moves.append(1))
    assert len(moves) == len(doc_pages(docs)) == 6 and report.warnings


def test_every_code_block_is_found_with_its_exact_line_and_sections(docs):
    found = pages(extract_docs(docs, "toolz", "0.12.1"))
    assert set(found) == {"guide/intro.md", "components.mdx", "api.rst"}, "pages without code give no file"
    intro = found["guide/intro.md"].examples
    lines = GUIDE.split("\n")
    for example in intro:
        first = example.code.split("\n")[0]
        if not first.startswith("def helper"):
            assert lines[example.line - 1] == first, example
    assert [e.code_block_index for e in intro] == list(range(len(intro)))
    currying = intro[1]
    assert currying.section_hierarchy == ["Guide", "Currying"] and currying.context == "Currying"
    assert currying.markdown_anchor == "currying"
    assert intro[2].section_hierarchy == ["Guide", "Currying", "Async use"]


def test_how_each_example_runs(docs):
    intro = pages(extract_docs(docs, "toolz", "0.12.1"))["guide/intro.md"].examples
    contexts = [(e.language, e.style, e.execution_context) for e in intro]
    assert contexts == [
        ("bash", "shell", "not_executable"),
        ("python", "script", "sync"),
        ("python", "script", "async"),
        ("python", "script", "not_executable"),
        ("python", "script", "not_executable"),
        ("python", "doctest", "sync"),
        ("python", "script", "sync"),
        ("python", "script", "sync"),
    ]
    assert [e.is_executable for e in intro][:3] == [False, True, True]
    assert "placeholder `<your-key>`" in intro[3].skip_reason
    assert "`...` where the reader fills in" in intro[4].skip_reason


def test_imports_and_third_party_dependencies(docs):
    currying = pages(extract_docs(docs, "toolz", "0.12.1"))["guide/intro.md"].examples[1]
    assert currying.imports == ["toolz", "requests", "yaml"]
    assert currying.dependencies == ["requests", "PyYAML"]
    assert module_names_of("python-dateutil") >= {"dateutil"} and module_names_of("PyYAML") >= {"yaml"}


def test_snippet_includes_are_followed(docs):
    page = pages(extract_docs(docs, "toolz", None))["guide/intro.md"]
    included = page.examples[-1]
    assert included.code == "def helper():\n    return 1\n" and included.snippet_source == "snippets/helper.py"
    assert included.section_hierarchy[-1] == "Included"
    assert [(f.path, f.content) for f in page.files] == [("helper.py", included.code)], "saved under its name"


def test_mdx_and_restructured_text(docs):
    found = pages(extract_docs(docs, "toolz", "0.12.1"))
    mdx = found["components.mdx"].examples
    assert len(mdx) == 1 and mdx[0].line == 8 and mdx[0].section_hierarchy == ["Components"]
    rst = found["api.rst"].examples
    assert [(e.line, e.section_hierarchy, e.execution_context) for e in rst] == [
        (12, ["API reference", "Pipes"], "sync"),
        (21, ["API reference", "Pipes", "Nested"], "async"),
    ]
    assert rst[0].code == "from toolz import pipe\n\npipe(1, str)\n"


def test_unreadable_files_are_skipped_with_a_warning_and_include_filters(docs):
    report = extract_docs(docs, "toolz", "0.12.1")
    assert any("binary.md: skipped, not a text file" in w for w in report.warnings)
    assert any("latin1.md: skipped, not UTF-8 text" in w for w in report.warnings)
    only = extract_docs(docs, "toolz", "0.12.1", include="guide/*.md")
    assert list(pages(only)) == ["guide/intro.md"]


def test_the_cli_writes_one_analysis_per_page_in_the_exact_format(docs, tmp_path):
    from stackbench.formats.walkthrough import ExtractionAnalysis
    from tests.builders import stackbench

    done = stackbench(
        "extract", "--docs", str(docs), "--library", "toolz", "--version", "0.12.1", "--output", str(tmp_path / "out")
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "api_analysis.json",
        "components_analysis.json",
        "guide__intro_analysis.json",
    ]
    data = json.loads((tmp_path / "out" / "guide__intro_analysis.json").read_text())
    assert ExtractionAnalysis.model_validate(data).total_examples == data["total_examples"] == 8
    assert set(data["examples"][0]) == {
        "library",
        "language",
        "code",
        "imports",
        "has_main",
        "is_executable",
        "execution_context",
        "line",
        "context",
        "dependencies",
        "section_hierarchy",
        "markdown_anchor",
        "code_block_index",
        "snippet_source",
        # extra fields; files of the existing tools have none of them and still load
        "style",
        "skip_reason",
        "expected_output",
        "expected_output_line",
        "readers_names",
        "named_in_prose",
        "expected_exception",
        "expected_exception_line",
        "doctest_groups",
        "shown_indent",
        "named_python",
        "builds_on_earlier",
        "package_init",
        "output_pictured",
    }
    assert {"setup", "requirements", "environment", "files"} <= set(data)
    assert "binary.md" in done.stderr


# -- pages written the way real docs are -------------------------------------------------------------------------
SPHINX_PAGE = """# Shapes

```{testsetup}
import math
```

```{doctest}
>>> round(math.pi, 2)
3.14
```

```{testcleanup}
del math
```

```{doctest}
:options: +SKIP

>>> slow_network_call()
```

```pycon
# a comment first
>>> 2 ** 3
8
```
"""
CONF_PY = 'extensions = ["sphinx.ext.doctest"]\ndoctest_global_setup = """\nimport shapes\n"""\n'

OUTPUTS_PAGE = """# Output

```python
print("hello")
```

```
hello
```

Running it prints:

```text
hello again
```

## Another section

```text
a tree of folders
```

```
import os
value = os.sep
```

Compare it with a value shown on its own:

```
Point(x=1, y=2)
```
"""

SETUP_PAGE = """# Setup

```console
$ python -m pip install "shapes[fast]" requests
```

```bash
# your environment
export SHAPES_HOME=/tmp/shapes
export GREETING='hello world'
```

```toml title="settings.toml"
size = 3
```

```toml
# defaults.toml
size = 1
```

```{code-block} python
:caption: app.py

VALUE = 42
```

```python
from app import VALUE
```

```python
@shapes.register
```

1. A step in a list:

    ```python
    import shapes
    shapes.draw()
    ```
"""

NESTED_PAGE = """# Nested

!!! note
    Inside a MkDocs admonition:

    ```python
    inside_admonition = True
    ```

````{note}
Inside a MyST directive:

```python
inside_directive = True
```
````

```{include} ../README.md
:start-after: <!-- start -->
```
"""

README = "# Readme\n\nIntro that is not included.\n<!-- start -->\n\n```python\nfrom_readme = True\n```\n"


@pytest.fixture
def real_docs(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "sphinx.md").write_text(SPHINX_PAGE)
    (docs / "conf.py").write_text(CONF_PY)
    (docs / "outputs.md").write_text(OUTPUTS_PAGE)
    (docs / "setup.md").write_text(SETUP_PAGE)
    (docs / "nested.md").write_text(NESTED_PAGE)
    (tmp_path / "README.md").write_text(README)
    return pages(extract_docs(docs, "shapes", "1.0"))


def test_doctest_sessions_of_every_fence_style_are_run_with_the_docs_hidden_setup(real_docs):
    page = real_docs["sphinx.md"]
    assert [(e.style, e.line, e.execution_context) for e in page.examples] == [
        ("doctest", 8, "sync"),
        ("doctest", 19, "sync"),
        ("doctest", 23, "sync"),
    ], "a session the docs' doctest run skips (:options: +SKIP) is shown to the reader, who runs it"
    assert page.examples[1].code.startswith(">>> slow_network_call()"), "directive options are not code"
    assert [(s.source, s.line, s.code.strip()) for s in page.setup] == [
        ("conf.py", 0, "import shapes"),
        ("sphinx.md", 4, "import math"),
    ]


def test_a_block_showing_what_a_script_prints_becomes_its_expected_output(real_docs):
    examples = real_docs["outputs.md"].examples
    styles = [(e.line, e.style) for e in examples]
    assert styles == [(4, "script"), (8, "output"), (14, "other"), (20, "other"), (24, "untagged"), (31, "other")]
    assert examples[0].expected_output == "hello\n" and examples[0].expected_output_line == 8
    assert examples[1].skip_reason == "output: what example 0 (line 4) prints"
    assert examples[2].skip_reason == "text, not a program", "a script has one output block"
    assert examples[3].skip_reason == "text, not a program", "a heading ends what the script shows"
    assert examples[5].skip_reason == "text, not a program", "a displayed value is no program"


def test_what_the_reader_sets_up_is_read_from_shell_blocks_and_file_blocks(real_docs):
    page = real_docs["setup.md"]
    assert [r.requirement for r in page.requirements] == ["shapes[fast]", "requests"]
    assert [(v.name, v.value) for v in page.environment] == [
        ("SHAPES_HOME", "/tmp/shapes"),
        ("GREETING", "hello world"),
    ]
    assert [(f.path, f.content) for f in page.files] == [
        ("settings.toml", "size = 3\n"),
        ("defaults.toml", "# defaults.toml\nsize = 1\n"),
        ("app.py", "VALUE = 42\n"),
    ]
    by_line = {e.line: e for e in page.examples}
    assert by_line[25].style == "script", "a saved module still runs"
    assert by_line[29].execution_context == "sync"
    assert by_line[33].skip_reason == "A fragment: decorators shown without the function they decorate."
    listed = by_line[39]
    assert listed.code == "import shapes\nshapes.draw()\n", "the list's indentation is layout"
    assert listed.execution_context == "sync"


def test_fences_inside_admonitions_directives_and_includes_are_found(real_docs):
    examples = real_docs["nested.md"].examples
    assert [(e.code.strip(), e.line, e.snippet_source) for e in examples] == [
        ("inside_admonition = True", 7, None),
        ("inside_directive = True", 14, None),
        ("from_readme = True", 7, "../README.md"),
    ]


# -- code a page about upgrading shows as the old release's -----------------------------------------------------
UPGRADING_PAGE = """# Upgrading to 3.0

## Opening a pond

::: code-group

```python [2.x]
from shapes import OldPond
```

```python [3.0]
from shapes import Pond
```

:::

### Before

```python
pond = OldPond(depth=2)
```

### After

```python
pond = Pond(depth=2)
```

Previously, you would write:

```python
pond.fill_all()
```

Before you start, check the depth:

```python
print(pond.depth)
```

In version 3.0, it is:

```python
pond.fill()
```
"""


EVAL_RST_PAGE = """# Commands

Make a command:

```{eval-rst}
.. shapes:example::

    @shapes.command()
    def hello():
        shapes.echo("hi")

What it looks like:

.. shapes:run::

    invoke(hello)
    invoke(hello, args=["--help"])

.. shapes:example::
    if __name__ == "__main__":
        hello()

.. math::

    y = x + 1

.. code-block:: python

    import shapes
```
"""


def test_code_a_page_about_upgrading_shows_as_the_old_releases_is_not_run_and_the_new_code_is(tmp_path):
    (tmp_path / "upgrading.md").write_text(UPGRADING_PAGE)
    (tmp_path / "ponds.md").write_text("# Ponds\n\n### Before\n\n```python\npond = Pond()\n```\n")
    read = pages(extract_docs(tmp_path, "shapes", "3.0.1"))
    runs = {e.code.strip(): e.skip_reason for e in read["upgrading.md"].examples}
    assert runs == {
        "from shapes import OldPond": "Not run: it shows the 2.x API for comparison, on a page about upgrading.",
        "from shapes import Pond": None,
        "pond = OldPond(depth=2)": "Not run: it shows the code from before the change for comparison, on a page "
        "about upgrading.",
        "pond = Pond(depth=2)": None,
        "pond.fill_all()": "Not run: it shows the code from before the change for comparison, on a page about "
        "upgrading.",
        "print(pond.depth)": None,
        "pond.fill()": None,
    }
    assert read["ponds.md"].examples[0].skip_reason is None, "a page about anything else runs all its code"


LABELLED_UPGRADE_PAGE = """# Moving to Shapes 2.0

## Filling

**v1.x:**

```python
from shapes import fill_all
fill_all(pond)
```

**v2.0:**

```python
pond.fill(level=Level.FULL)
```
"""


def test_a_paragraph_that_only_labels_a_block_with_an_old_release_marks_it_and_the_pages_target_runs(tmp_path):
    (tmp_path / "moving.md").write_text(LABELLED_UPGRADE_PAGE)
    old, new = pages(extract_docs(tmp_path, "shapes", "2.3.0"))["moving.md"].examples
    assert old.skip_reason == "Not run: it shows the 1.x API for comparison, on a page about upgrading."
    assert new.skip_reason is None, "2.0 is the release the page moves its reader to, older than 2.3.0 or not"
    assert new.readers_names == ["pond"], "the reader's own pond, being upgraded; the class is still imported"


PROSE_INSTALLS_PAGE = """# Renderers

Install the `fast` extra to draw with the fast renderer:

```python
from shapes.fast import draw
```

For pictures, run `pip install "shapes[svg]" pillow` first, then `pip install <your-plugin>` if you have one.

```python
from shapes.svg import picture
```
"""


def test_the_rest_of_an_eval_rst_fence_is_read_like_a_rest_page_at_the_lines_of_the_page(tmp_path):
    (tmp_path / "commands.md").write_text(EVAL_RST_PAGE)
    examples = pages(extract_docs(tmp_path, "shapes", "1.0"))["commands.md"].examples
    assert [(e.line, e.style, e.execution_context) for e in examples] == [
        (8, "untagged", "sync"),
        (16, "other", "not_executable"),
        (20, "untagged", "sync"),
        (29, "script", "sync"),
    ], "a theme's example directive holds a program; a formula is no code"
    lines = EVAL_RST_PAGE.split("\n")
    assert all(lines[e.line - 1].strip() == e.code.split("\n")[0] for e in examples)
    assert examples[1].skip_reason.startswith("a run the docs build shows (`shapes:run`)")
    assert examples[0].expected_output is None, "a run the docs build shows is no output the reader can compare"


RUN_DIRECTIVES_PAGE = """# Shapes

```{shapes:source}
from shapes import Square, area


def describe(shape):
    return f"{shape} covers {area(shape)}"
```

The docs' build runs this one and shows what it prints:

```{shapes:run}
print(describe(Square(2)))
```

And this one, with a helper of the build's own:

```{shapes:run}
result = invoke(square, args=["--help"])
assert result.exit_code == 0
```

```{program-output} shapes --help
```
"""


def test_a_run_directive_holding_a_whole_program_is_run_and_one_calling_the_builds_own_helper_is_output(tmp_path):
    (tmp_path / "shapes.md").write_text(RUN_DIRECTIVES_PAGE)
    examples = pages(extract_docs(tmp_path, "shapes", "1.0"))["shapes.md"].examples
    assert [(e.line, e.style, e.execution_context) for e in examples] == [
        (4, "untagged", "sync"),
        (14, "untagged", "sync"),
        (20, "other", "not_executable"),
    ], "a function the page defines before is no helper of the build; a run of the command in its argument is no code"
    assert examples[2].skip_reason == (
        "a run the docs build shows (`shapes:run`), calling `invoke`, which its build provides and the page never "
        "defines: the reader sees its output"
    )


GROUPS_PAGE = """# Groups

```{testsetup} shapes
import shapes
```

```{testsetup} *
import math
```

```{doctest} shapes
>>> shapes.area(2)
4
```

```{testcode}
print(math.pi > 3)
```
"""


def test_installs_a_paragraph_names_are_made_like_those_of_shell_blocks(tmp_path):
    (tmp_path / "renderers.md").write_text(PROSE_INSTALLS_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["renderers.md"]
    assert [(r.requirement, r.line) for r in page.requirements] == [
        ("shapes[fast]", 6),
        ("shapes[svg]", 12),
        ("pillow", 12),
    ], "a placeholder in prose is no package"


def test_the_install_lines_of_the_docs_installation_pages_and_sections_are_given_to_every_page(tmp_path):
    (tmp_path / "getting-started.md").write_text("# Start\n\n```console\n$ pip install shapes[svg]\n```\n")
    (tmp_path / "readme.md").write_text("# Shapes\n\n## Installation\n\n```sh\npip install shapes[fast]\n```\n")
    (tmp_path / "guide.md").write_text("# Guide\n\n## Deploying\n\n```sh\npip install gunicorn\n```\n")
    (tmp_path / "tour.md").write_text("# Tour\n\n```python\nimport shapes\n```\n")
    found = pages(extract_docs(tmp_path, "shapes", "1.0"))
    assert found["tour.md"].docs_requirements == ["shapes[svg]", "shapes[fast]"], "a guide's own installs stay its"
    assert found["tour.md"].requirements == [] and found["guide.md"].docs_requirements == [
        "shapes[svg]",
        "shapes[fast]",
    ]


def test_a_program_shown_running_python_files_is_read_on_its_page_and_told_to_every_page(tmp_path):
    (tmp_path / "cli.md").write_text("# CLI\n\n```console\n$ shapes draw inventory.py site.py --fast\n```\n")
    (tmp_path / "facts.md").write_text("# Facts\n\n```sh\nshapes @local fact files.File path=setup.py\n```\n")
    found = pages(extract_docs(tmp_path, "shapes", "1.0"))
    shown = found["cli.md"].file_commands
    assert [(c.command, c.program, c.files, c.line) for c in shown] == [
        ("shapes draw inventory.py site.py --fast", "shapes", ["inventory.py", "site.py"], 4)
    ]
    assert found["facts.md"].file_commands == [], "a value given to a program is no file it runs"
    assert found["facts.md"].docs_file_commands == shown


def test_a_package_the_prose_says_a_feature_needs_installed_is_installed_by_its_page_and_told_to_every_page(tmp_path):
    (tmp_path / "curves.md").write_text(
        "# Curves\n\nDrawing curves requires [bezier](https://example.org/bezier) to be installed.\n\n"
        "```python\nimport shapes\n```\n\nIt requires it to be installed first.\n\n```python\nimport shapes\n```\n"
    )
    (tmp_path / "tour.md").write_text("# Tour\n\n```python\nimport shapes\n```\n")
    found = pages(extract_docs(tmp_path, "shapes", "1.0"))
    assert [r.requirement for r in found["curves.md"].requirements] == ["bezier"], "a word of prose is no package"
    assert found["tour.md"].requirements == [] and found["tour.md"].docs_requirements == ["bezier"]


def test_the_first_of_the_alternatives_an_installation_page_lists_is_what_every_reader_installed(tmp_path):
    (tmp_path / "installation.md").write_text(
        "# Installation\n\n```sh\npip install shapes\n```\n\n## Backends\n\nIt needs one of:\n\n"
        "- `Qt`: `pip install shapes[qt]`\n- `Tk`:  `pip install shapes[tk]`\n\n## Extras\n\n"
        "- `pip install shapes[svg]`\n\nMore text.\n"
    )
    (tmp_path / "guide.md").write_text(
        "# Guide\n\n- `pip install shapes[qt]`\n- `pip install shapes[tk]`\n\n```python\nimport shapes\n```\n"
    )
    found = pages(extract_docs(tmp_path, "shapes", "1.0"))
    assert found["installation.md"].install_choices == ["shapes[qt]"], "one item alone is no choice"
    assert found["guide.md"].install_choices == [], "a list outside an installation section is not followed first"
    assert found["guide.md"].docs_installs == ["shapes[qt]"]


def test_the_extras_of_the_installation_pages_first_install_line_are_what_every_reader_installed(tmp_path):
    (tmp_path / "installation.md").write_text("# Installation\n\n```sh\npip install shapes[svg,fast]\n```\n")
    (tmp_path / "tour.md").write_text("# Tour\n\n```python\nimport shapes\n```\n")
    assert pages(extract_docs(tmp_path, "shapes", "1.0"))["tour.md"].docs_installs == ["shapes[svg,fast]"]
    (tmp_path / "installation.md").write_text(
        "# Installation\n\n```sh\npip install shapes\n```\n\n## Extras\n\n```sh\npip install shapes[svg]\n```\n"
    )
    assert pages(extract_docs(tmp_path, "shapes", "1.0"))["tour.md"].docs_installs == [], (
        "extras further down are optional"
    )


def test_an_install_line_the_installation_section_gives_in_inline_code_counts_as_one_in_a_block(tmp_path):
    (tmp_path / "README.md").write_text(
        '# Shapes\n\n## Installation\nFor everything:\n- Run `pip install "shapes[all]"`\n\nOr the core:\n'
        "- Run `pip install shapes`, then the extras you need.\n\n## Usage\n\n```python\nimport shapes\n```\n"
    )
    (read,) = extract_docs(tmp_path, "shapes", "1.0").analyses
    assert (read[1].installation_lines, read[1].docs_installs) == (["shapes[all]", "shapes"], ["shapes[all]"])
    (tmp_path / "README.md").write_text(
        "# Shapes\n\n## Installation\n\n```sh\npip install shapes\n```\n\nThen `pip install shapes[svg]` for SVG.\n"
    )
    (read,) = extract_docs(tmp_path, "shapes", "1.0").analyses
    assert read[1].docs_installs == [], "an extra named after the first line stays optional"


def test_the_names_the_docs_import_modules_under_are_known_on_every_page(tmp_path):
    (tmp_path / "start.md").write_text("# Start\n\n```python\nimport shapes as sh\nimport numpy as np\n```\n")
    (tmp_path / "tour.md").write_text("# Tour\n\n```pycon\n>>> import shapes.draw as shd\n```\n")
    found = pages(extract_docs(tmp_path, "shapes", "1.0"))
    assert found["tour.md"].docs_aliases == {"sh": "shapes", "np": "numpy", "shd": "shapes.draw"}


def test_a_session_is_stored_with_the_continuation_prompts_its_author_left_out(tmp_path):
    (tmp_path / "tour.md").write_text("# Tour\n\n```pycon\n>>> draw(\n    size=2,\n)\n'ok'\n```\n")
    [session] = pages(extract_docs(tmp_path, "shapes", "1.0"))["tour.md"].examples
    assert session.code == ">>> draw(\n...     size=2,\n... )\n'ok'\n"
    assert session.style == "doctest" and session.execution_context != "not_executable"


def test_a_file_a_paragraph_links_for_the_reader_to_save_is_a_file_of_the_page_fetched_from_its_address(tmp_path):
    (tmp_path / "data.md").write_text(
        "# Data\n\nDownload [`cities.csv`](https://example.org/data/cities.csv), see the "
        "[`notes.csv`](https://github.com/o/r/blob/main/notes.csv) page, and [`unused.csv`](https://example.org/unused.csv)."
        "\n\n```python\nprint(open('cities.csv').read(), open('notes.csv').read())\n```\n"
    )
    files = pages(extract_docs(tmp_path, "shapes", "1.0"))["data.md"].files
    assert [(f.path, f.url, f.content, f.line) for f in files] == [
        ("cities.csv", "https://example.org/data/cities.csv", "", 5)
    ], "a web page about a file, or a file no example uses, is not fetched"


FAILING_EXAMPLES_PAGE = """# Mistakes

```python
from shapes import Square
Square(-1)  # raises ValueError
```

```python
from shapes import Square
# fails: sides are positive
Square(-2)
```

Passing a string instead of a number raises a `TypeError`:

```python
Square("wide")
```

This fails immediately:

```python
Square()
```

It no longer raises a `TypeError`:

```python
Square(2.5)
```

If the side is negative, this raises a `ValueError`:

```python
try:
    Square(-3)
except ValueError:
    pass
```

```python
def check(side):
    Square(side)  # raises ValueError for a negative side
```

Fail fast instead, with `strict=True`:

```python
Square(2, strict=True)
```

A guard that finds a negative side then raises a `ValueError`:

```python
from shapes import Square

class Checked(Square):
    def guard(self):
        return self.side >= 0
```

Its test then raises a `ValueError`:

```python
from shapes import Square

def test_negative_side():
    Square(-1)
```
"""


def test_an_example_the_text_says_fails_expects_that_exception(tmp_path):
    (tmp_path / "mistakes.md").write_text(FAILING_EXAMPLES_PAGE)
    examples = pages(extract_docs(tmp_path, "shapes", "1.0"))["mistakes.md"].examples
    assert [(e.expected_exception, e.expected_exception_line) for e in examples] == [
        ("ValueError", 5),
        ("Exception", 11),
        ("TypeError", None),
        ("Exception", None),
        (None, None),
        (None, None),
        (None, None),
        (None, None),
        (None, None),
        ("ValueError", None),
    ], "a negation, a handled exception, a comment inside a function, an instruction and definitions say nothing"


TAGGED_CELLS_PAGE = """---
file_format: mystnb
---

# Mistakes

A negative side:

```{code-cell} python
:tags: [raises-exception]

from shapes import Square
Square(-1)
```

```{code-cell} python
:tags: [raises-exception]

try:
    Square(-1)
except ValueError as error:
    print(error)
```

This only happens with shapes versions < 1.2; later ones round the side:

```{code-cell} python
:tags: [raises-exception]

Square(0.5)
```

```{code-cell} python
Square(2)
```
"""


def test_a_notebook_cell_tagged_to_raise_expects_an_exception_unless_it_catches_it_or_only_old_releases_raise(
    tmp_path,
):
    (tmp_path / "cells.md").write_text(TAGGED_CELLS_PAGE)
    examples = pages(extract_docs(tmp_path, "shapes", "1.3"))["cells.md"].examples
    assert [e.expected_exception for e in examples] == ["Exception", None, None, None]


NOT_PYTHON_PAGE = """# Notebook

```python
%%time
from shapes import Square
```

```python
!pip install shapes-extra
import shapes_extra
```

```python
from shapes import Square
%timeit Square(2)
```

```python
def on_resize(...):
    ...
```

```python
square = <...>
```

```python
print("unclosed"
```
"""


def test_ipython_magics_and_ellipsis_pseudo_code_are_not_run_as_python_and_say_why(tmp_path):
    (tmp_path / "notebook.md").write_text(NOT_PYTHON_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["notebook.md"]
    timed, installed, timeit, handler, gap, broken = page.examples
    assert timed.execution_context == "sync" and timed.code.startswith("# %%time  (IPython magic `%%time`")
    assert installed.execution_context == "sync" and [r.requirement for r in page.requirements] == ["shapes-extra"]
    assert timeit.skip_reason == "IPython magic `%timeit`: runs only in IPython/Jupyter."
    assert handler.skip_reason == "Not run: its line 1 has `...` where the reader fills in their own code."
    assert gap.skip_reason == "Not run: its line 1 has `...` where the reader fills in their own code."
    assert broken.execution_context == "sync", "a plain syntax error is still the page's to fix"


PSEUDO_CODE_PAGE = """# Painters

A painter is a generator function that yields its strokes:

```python
yield Stroke("red")
yield Stroke("blue", width=2)
```

A painter can hand over to another one:

```python
yield from shapes.tile._strokes(
    colour="red",
    ...,
)
```

Check the canvas first:

```python
import shapes
def canvas_ready(your checks go here)
shapes.paint(canvas_ready())
```
"""


def test_pseudo_code_of_a_functions_body_other_arguments_or_words_is_not_run_and_says_why(tmp_path):
    (tmp_path / "painters.md").write_text(PSEUDO_CODE_PAGE)
    body, arguments, words = pages(extract_docs(tmp_path, "shapes", "1.0"))["painters.md"].examples
    assert body.skip_reason == (
        "Not run: its line 1 returns or yields outside a function: lines from a function's body, without it."
    )
    assert arguments.skip_reason == "Not run: its line 3 has `...` where the reader fills in their own code."
    assert words.skip_reason == (
        "Not run: its line 2 has words (`your checks go here`) where the reader writes their own code."
    )


TEMPLATE_PAGE = """# What the painter adds

For each tile you colour, the painter writes a check after it:

```python
# Each colouring like this...
{tile_name}: {colour} = {shade}

# ...gets a check like this.
check_colour({tile_name}, {colour})
```

A palette names its colours in a set, and prints them in an f-string:

```python
palette = {"red", "blue"}
edges = {"top": 1}
print(f"{len(palette)} colours, {edges['top']} edge")
```
"""


def test_a_template_with_names_in_braces_where_code_goes_is_not_run_and_real_braces_still_run(tmp_path):
    (tmp_path / "painter.md").write_text(TEMPLATE_PAGE)
    template, palette = pages(extract_docs(tmp_path, "shapes", "1.0"))["painter.md"].examples
    assert template.skip_reason == (
        "Not run: it is a template: `{tile_name}` (its line 2) stands for what the reader writes there."
    )
    assert palette.execution_context == "sync" and palette.skip_reason is None


SEVERAL_FILES_PAGE = """# Layout

Keep the shapes apart from the code that draws them:

```python
# shapes/tiles.py
CORNER = "corner"

# drawing.py
from shapes.tiles import CORNER
print(CORNER)
```

Then import it:

```python
from shapes.tiles import CORNER
```
"""


def test_a_block_showing_several_files_under_their_names_is_not_one_module_nor_run_as_one_script(tmp_path):
    (tmp_path / "layout.md").write_text(SEVERAL_FILES_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["layout.md"]
    several, _ = page.examples
    assert several.skip_reason == (
        "Not run: it shows 2 files in one block (`shapes/tiles.py`, `drawing.py`), which the reader saves apart."
    )
    assert page.files == [], "neither file is the whole block"


SKELETON_PAGE = """# Plugins

Write your plugin by subclassing `Plugin`:

```python
from shapes import Plugin

class Rounded(Plugin):
    # your drawing code goes here

shapes.draw(square, plugins=[Rounded()])
```

```python
class Rounded(Plugin)
    # your drawing code goes here
```
"""


def test_a_class_whose_body_is_only_a_comment_is_a_skeleton_the_reader_fills_in_not_a_syntax_error(tmp_path):
    (tmp_path / "plugins.md").write_text(SKELETON_PAGE)
    skeleton, broken = pages(extract_docs(tmp_path, "shapes", "1.0"))["plugins.md"].examples
    assert skeleton.skip_reason == (
        "Not run: the body under its line 3 is only a comment, where the reader writes their own code."
    )
    assert broken.execution_context == "sync", "a missing colon is a syntax error no comment explains"


def test_a_block_holding_an_include_the_docs_do_not_ship_is_not_run(tmp_path):
    (tmp_path / "thanks.md").write_text('# Thanks\n\n```python\n--8<-- "tools/make_thanks.py"\n```\n')
    (example,) = pages(extract_docs(tmp_path, "shapes", "1.0"))["thanks.md"].examples
    assert example.execution_context == "not_executable"
    assert example.skip_reason == (
        "Not run: it includes `tools/make_thanks.py`, a file the docs' build puts there and the docs do not ship."
    )


MODULES_PAGE = """# Helpers

```python
# in geometry.py
def area(w, h):
    return w * h
```

Create a file called `naming.py`:

```python
def title(text):
    return text.title()
```

Then use both:

```python
from geometry import area
from naming import title
print(title("ok"), area(2, 3))
```

The function `area` in `geometry.py` multiplies; here is how to call it:

```python
print(area(1, 1))
```
"""


OWN_NAMES_PAGE = """# Own names

Pass your `store` to the function:

```pycon
>>> shapes.save(store, token)
```

Replace `token` with the one you were given.

```python
shapes.draw(store)
```
"""


def test_python_blocks_the_page_names_as_modules_become_files_later_blocks_import(tmp_path):
    (tmp_path / "modules.md").write_text(MODULES_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["modules.md"]
    assert [(f.path, f.line) for f in page.files] == [("geometry.py", 4), ("naming.py", 12)]
    assert page.files[0].content.startswith("# in geometry.py\ndef area")
    assert [e.execution_context for e in page.examples] == ["sync"] * 4, "a saved module still runs"


def test_the_prose_around_an_example_names_the_readers_own_objects(tmp_path):
    (tmp_path / "own.md").write_text(OWN_NAMES_PAGE)
    session, script = pages(extract_docs(tmp_path, "shapes", "1.0"))["own.md"].examples
    assert session.readers_names == ["store", "token"], "the prose before it and after it"
    assert script.readers_names == ["token"]


def test_a_command_substitution_in_an_install_line_is_one_requirement_however_many_words_it_spans():
    assert shell_requirements("pip install shapes $(shapes-tool list-deps --all) requests") == [
        "shapes",
        "$(shapes-tool list-deps --all)",
        "requests",
    ]
    assert shell_requirements("pip install `shapes-tool deps`") == ["`shapes-tool deps`"]


def test_an_install_line_of_the_projects_own_checkout_sets_up_contributors_not_readers():
    assert shell_requirements("pip install .[tests,fast] shapes-metrics pytest-cov") == []
    assert shell_requirements('pip install -e ".[dev]" shapes-lint') == []
    assert shell_requirements("pip install shapes[fast] shapes-metrics") == ["shapes[fast]", "shapes-metrics"]


def test_hidden_setup_comes_from_the_conf_py_of_the_sphinx_project_each_page_belongs_to(tmp_path):
    docs, other = tmp_path / "docs", tmp_path / "examples" / "more"
    (docs / "guide").mkdir(parents=True)
    other.mkdir(parents=True)
    (docs / "conf.py").write_text('doctest_global_setup = "import shapes"\n')
    (tmp_path / "examples" / "conf.py").write_text('doctest_global_setup = "import circles"\n')
    for folder in (docs, docs / "guide", other, tmp_path):
        (folder / "page.md").write_text(GROUPS_PAGE)
    found = pages(extract_docs(tmp_path, "shapes", "1.0", include="**/*.md"))
    assert [(s.source, s.code) for s in found["docs/page.md"].setup][:1] == [("docs/conf.py", "import shapes")]
    assert found["docs/guide/page.md"].setup[0].source == "docs/conf.py", "the nearest conf.py above the page"
    assert found["examples/more/page.md"].setup[0].code == "import circles"
    assert [s.source for s in found["page.md"].setup] == ["page.md", "page.md"], "no Sphinx project, no conf.py"
    assert list(pages(extract_docs(tmp_path, "shapes", "1.0", include="docs/**/*.md"))) == [
        "docs/guide/page.md",
        "docs/page.md",
    ], "`**/` also stands for no folder at all"


def test_testsetup_blocks_name_the_doctest_groups_they_set_up(tmp_path):
    (tmp_path / "page.md").write_text(GROUPS_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["page.md"]
    assert [s.groups for s in page.setup] == [["shapes"], ["*"]]
    assert [e.doctest_groups for e in page.examples] == [["shapes"], ["default"]]


def test_a_tab_naming_a_module_makes_it_a_file_and_its_empty_subclass_is_the_whole_module_the_program_loads(
    tmp_path,
):
    (tmp_path / "hooks.md").write_text(
        '# Hooks\n\n```python tab="src/kit/\\_\\_init\\_\\_.py"\n    from shapes import Hook\n\n\n'
        "    class PaintHook(Hook):\n        ...\n```\n\n"
        "```python\nfrom shapes import Hook\n\n\nclass Cube(Hook):\n    ...\n```\n"
    )
    read = pages(extract_docs(tmp_path, "shapes", "1.0"))["hooks.md"]
    assert [(f.path, f.line) for f in read.files] == [("src/kit/__init__.py", 4)]
    named, sketch = read.examples
    assert (named.execution_context, named.shown_indent) == ("sync", 4)
    assert sketch.skip_reason.startswith("Not run: it only sketches classes"), "shown alone, it is a sketch"


def test_a_block_whose_lines_are_all_indented_on_the_page_runs_dedented_and_keeps_the_indent_it_shows(tmp_path):
    (tmp_path / "page.md").write_text(
        "# Indented\n\n```python\n    import shapes\n\n    shapes.draw()\n```\n\n"
        "1. In a list:\n\n    ```python\n    import shapes\n    ```\n"
    )
    shown, listed = pages(extract_docs(tmp_path, "shapes", "1.0"))["page.md"].examples
    assert (shown.code, shown.shown_indent, shown.execution_context) == ("import shapes\n\nshapes.draw()\n", 4, "sync")
    assert (listed.code, listed.shown_indent) == ("import shapes\n", 0), "a list's indentation is layout"


def test_newer_syntax_keeps_the_python_the_page_names_near_it_for_the_validator(tmp_path):
    (tmp_path / "page.md").write_text(
        "# Generics\n\nOn Python 3.12 or newer:\n\n```python\nclass Box[T]:\n    item: T\n```\n\n"
        "## Aliases\n\nAliases work on Python 3.12+.\n\n```{note}\nSee the typing docs.\n```\n\n"
        "```pycon\n>>> type Pair = tuple[int, int]\n```\n\n"
        "## Untold\n\nWith PEP 695, since Python 3.9:\n\n```pycon\n>>> type Pair = tuple[int, int]\n```\n\n"
        "```python\nprint('Python 3.12')\n```\n"
    )
    examples = pages(extract_docs(tmp_path, "shapes", "1.0"))["page.md"].examples
    assert [(e.named_python, e.execution_context) for e in examples] == [
        ("3.12", "sync"),
        ("3.12", "sync"),
        ("3.9", "sync"),
        (None, "sync"),
    ], "named in the text before it, in its section before a note; kept for newer syntax only"


def test_a_module_the_page_lays_out_as_a_file_is_never_a_dependency_to_install(tmp_path):
    (tmp_path / "testing.md").write_text(
        "# Testing\n\nThe test fetches with requests.\n\n```{code-block} python\n:caption: greeting.py\n\nimport shapes\n\n"
        "WORD = 'hi'\n```\n\n"
        "```python\nimport requests\nfrom greeting import WORD\nprint(WORD)\n```\n"
    )
    module, test = pages(extract_docs(tmp_path, "shapes", "1.0"))["testing.md"].examples
    assert test.imports == ["requests", "greeting"]
    assert test.dependencies == ["requests"], "greeting.py is shown on the page; requests is a package"


def test_an_error_the_page_shows_in_a_python_block_is_what_the_example_before_it_raises(tmp_path):
    (tmp_path / "errors.md").write_text(
        "# Errors\n\n```python\nsquare = shapes.Square(-1)\n```\n\nyou get an error\n\n"
        "```python\nshapes.errors.BadSide: side -1 is not positive\n```\n\n"
        "```python\nshapes.Square(1).grow(-2)\n```\n\n"
        "```python\nTraceback (most recent call last):\n  ...\nValueError: cannot shrink\n```\n\n"
        "```python\nprint(square)\n```\n\n```python\nsizes: dict[str, int]\n```\n"
    )
    made, error, grown, traceback, printed, annotated = pages(extract_docs(tmp_path, "shapes", "1.0"))[
        "errors.md"
    ].examples
    assert (made.expected_exception, grown.expected_exception) == ("BadSide", "ValueError")
    assert error.style == traceback.style == "output"
    assert error.skip_reason == "output: the BadSide example 0 (line 4) raises"
    assert printed.expected_exception is None and printed.style == "script", "code that parses is code"
    assert annotated.style == "script", "an annotation is code"


def test_a_traceback_in_a_python_block_after_no_script_is_output(tmp_path):
    (tmp_path / "failing.md").write_text(
        "# Failing\n\n````md\n```python run\nassert 1 == 2\n```\n````\n\nThe page then shows:\n\n"
        '```python\nTraceback (most recent call last):\n  File "<block>", line 1, in <module>\n'
        "    assert 1 == 2\nAssertionError\n```\n"
    )
    shown, traceback = pages(extract_docs(tmp_path, "shapes", "1.0"))["failing.md"].examples
    assert (traceback.style, traceback.execution_context) == ("output", "not_executable")
    assert traceback.skip_reason == "output: a traceback of AssertionError, not code to run"


def test_a_python_block_that_does_not_parse_after_a_sentence_saying_it_is_printed_is_output(tmp_path):
    (tmp_path / "help.md").write_text(
        "# Help\n\nAfter this, `help(area)` now prints the following:\n\n```python\nHelp on function area:\n\n"
        "area(side: int)\n```\n\nThe code below prints the area:\n\n```python\nprint(area(2)\n```\n\n"
        "You might also see it written as:\n\n```python\ndef area(side):\n    # your code\n```\n"
    )
    shown, broken, seen = pages(extract_docs(tmp_path, "shapes", "1.0"))["help.md"].examples
    assert seen.style == "script", "code a reader may see written is code"
    assert (shown.style, shown.skip_reason) == ("output", "output: the sentence before it says it is what is printed")
    assert broken.style == "script", "a sentence that does not end on a colon introduces code"


def test_an_ipython_traceback_in_a_python_block_is_output(tmp_path):
    (tmp_path / "failing.md").write_text(
        "# Failing\n\nIf we try this, we get:\n\n```python\nNameError       Traceback (most recent call last)\n"
        "<ipython-input-1-2c6f> in <module>\n----> 3 class Real:\n      4     pass\n\n"
        "NameError: name 'Real' is not defined\n```\n"
    )
    [traceback] = pages(extract_docs(tmp_path, "shapes", "1.0"))["failing.md"].examples
    assert (traceback.style, traceback.skip_reason) == ("output", "output: a traceback of NameError, not code to run")


def test_a_distribution_the_page_links_on_pypi_is_the_one_a_prefixed_module_comes_from(tmp_path):
    (tmp_path / "plugins.md").write_text(
        "# Plugins\n\nThe plugin is published as [pyshapes-colour](https://pypi.org/project/pyshapes-colour/).\n\n"
        "```python\nimport shapes_colour\nimport shapes_extra\nshapes_colour.init()\n```\n"
    )
    example = pages(extract_docs(tmp_path, "shapes", "1.0"))["plugins.md"].examples[0]
    assert example.dependencies == ["pyshapes-colour"], "shapes-extra is never named: no dependency to install"


ARGUED_AGAINST_PAGE = """# Comparing kinds

You might be tempted to compare the kinds by identity:

```pycon
>>> kind_of(tile) is shapes.Kind
```

Don't do this:

```python
tiles = shapes.load_all()
```

Compare them with `same_kind` instead:

```python
import shapes
print(shapes.same_kind(shapes.Tile(), shapes.Tile()))
```
"""


def test_code_the_page_argues_against_is_not_run_and_says_so(tmp_path):
    (tmp_path / "kinds.md").write_text(ARGUED_AGAINST_PAGE)
    tempted, forbidden, advised = pages(extract_docs(tmp_path, "shapes", "1.0"))["kinds.md"].examples
    reason = "Not run: the page shows it as what the reader might be tempted to write, to argue against it."
    assert tempted.skip_reason == reason and forbidden.skip_reason == reason
    assert advised.execution_context == "sync"


SHAPES_ONLY_PAGE = """# Tiles

A tile is declared like this:

```python
Tile("corner", edge)
```

Any record type works:

```python
@record
class Tile:
    ...

save(Tile())
```

Add yours after the others:

```python
tiles = [
    ...
    Tile("corner", edge)
]
```
"""


def test_entries_elided_fields_and_elided_entries_are_shown_for_their_shape_not_run(tmp_path):
    (tmp_path / "tiles.md").write_text(SHAPES_ONLY_PAGE)
    entry, elided, listed = pages(extract_docs(tmp_path, "shapes", "1.0"))["tiles.md"].examples
    assert entry.skip_reason == "Not run: it only builds `Tile` objects and keeps none: entries shown for their shape."
    assert elided.skip_reason.startswith("Not run: its class `Tile` has `...` for a body (its fields left out)")
    assert listed.skip_reason == "Not run: its line 2 has `...` where the reader fills in their own code."


def test_a_package_an_example_imports_is_a_dependency_only_when_the_page_names_it(tmp_path):
    (tmp_path / "serving.md").write_text(
        "# Serving\n\nFetch pages with `httpx`; the colours come from [this project](https://pypi.org/project/"
        "pyshapes-colour/).\n\n<!-- the docs build needs uvicorn -->\n\n```python\nimport httpx\nimport uvicorn\n"
        "import shapes_colour\n```\n\n```pycon\n>>> import pendulum\n>>> import httpx\n```\n\n"
        "```bash\nuvicorn app:app --reload\n```\n\nServed by [a rival](https://www.uvicorn.org).\n"
    )
    analysis = pages(extract_docs(tmp_path, "shapes", "1.0"))["serving.md"]
    script, session, _ = analysis.examples
    assert script.dependencies == ["httpx", "pyshapes-colour"], "uvicorn is named only in a comment and in code"
    assert session.dependencies == ["httpx"], "a session's imports too"
    assert {"httpx", "fetch", "rival", "pyshapes-colour"} <= set(analysis.prose_names)
    assert "uvicorn" not in analysis.prose_names, "a comment, a link's address, a command: not words the reader reads"


def test_a_package_the_page_links_the_repository_of_is_named(tmp_path):
    (tmp_path / "hooks.md").write_text(
        "# Hooks\n\nUse the [hook extension][hooks]; it must be installed beside shapes.\n\n"
        "[hooks]:\n    <https://github.com/shape-org/shapes-hooks.git#the-hook>\n\n"
        "```python\nfrom shapes_hooks import Hook\n```\n"
    )
    analysis = pages(extract_docs(tmp_path, "shapes", "1.0"))["hooks.md"]
    assert "shapes-hooks" in analysis.prose_names
    assert analysis.examples[0].dependencies == ["shapes-hooks"]


def test_a_vuepress_code_import_in_a_tab_is_the_script_of_its_file(tmp_path):
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "draw.py").write_text("import shapes\n\nshapes.draw()\n")
    (tmp_path / "guide.md").write_text(
        "# Drawing\n\n::: tabs\n\n@tab Short\n\n@[code python](./examples/draw.py)\n\n:::\n"
    )
    [example] = pages(extract_docs(tmp_path, "shapes", "1.0"))["guide.md"].examples
    assert (example.style, example.execution_context, example.code) == (
        "script",
        "sync",
        "import shapes\n\nshapes.draw()\n",
    )
    assert (example.snippet_source, example.line) == ("examples/draw.py", 1)


def test_a_diagram_after_a_script_is_a_picture_not_what_the_script_prints(tmp_path):
    (tmp_path / "page.md").write_text(
        "# Flow\n\n```python\nimport shapes\n```\n\nThe flow looks like this:\n\n```mermaid\ngraph TD\n    A --> B\n```\n"
    )
    script, diagram = pages(extract_docs(tmp_path, "shapes", "1.0"))["page.md"].examples
    assert script.expected_output is None
    assert (diagram.style, diagram.skip_reason) == ("other", "not Python (mermaid)")


def test_an_untagged_call_passing_a_name_and_a_value_is_code_and_a_repr_or_signature_is_not(tmp_path):
    (tmp_path / "page.md").write_text(
        "# Loading\n\n```python\nfrom shapes import Square, load\n```\n\nLoading a bad side:\n\n"
        '```\nload(Square, "-1")\n```\n\nIt is shown as:\n\n```\nSquare(side=1)\n```\n\n'
        "## Reference\n\n```\nload(kind, text)\n```\n"
    )
    loaded, shown, signature = pages(extract_docs(tmp_path, "shapes", "1.0"))["page.md"].examples[1:]
    assert (loaded.style, loaded.execution_context) == ("untagged", "sync")
    assert shown.style == "other" and signature.style == "other"


def test_an_untagged_program_whose_lines_after_the_first_are_shifted_runs_as_shown(tmp_path):
    (tmp_path / "page.rst").write_text(
        "Hooks\n=====\n\nFor example::\n\n    import shapes\n\n     def hook():\n         shapes.draw()\n\n"
        "Not code::\n\n    a plain\n     indented note\n"
    )
    shifted, note = pages(extract_docs(tmp_path, "shapes", "1.0"))["page.rst"].examples
    assert (shifted.style, shifted.execution_context) == ("untagged", "sync")
    assert shifted.code == "import shapes\n\n def hook():\n     shapes.draw()\n", "the reader copies it as shown"
    assert note.skip_reason == "text, not a program"


TESTS_PAGE = """# Testing shapes

```python
from shapes import area

def square(side):
    return area(side, side)
```

```python
def test_square():
    assert square(2) == 4
```

The test above fails with a `NameError`: it never imports `square`.

```python
@pytest.fixture(name="side")
def _side():
    return 3
```

```python
def test_area():
    assert area(1, 2) == 2

test_area()
```
"""


def test_a_block_of_tests_whose_comment_says_the_test_fails_expects_the_failure(tmp_path):
    (tmp_path / "testing.md").write_text(
        "# Partial matches\n\n```python\nfrom shapes import area\n\n\ndef test_area():\n"
        "    # the second side is missing, so the test will fail\n    assert area(2) == 4\n```\n"
    )
    (tests,) = pages(extract_docs(tmp_path, "shapes", "1.0"))["testing.md"].examples
    assert (tests.style, tests.expected_exception) == ("tests", "Exception")


def test_a_block_of_tests_or_fixtures_is_a_test_module_run_with_pytest_and_one_that_calls_its_tests_is_a_script(
    tmp_path,
):
    (tmp_path / "testing.md").write_text(TESTS_PAGE)
    code, tests, fixtures, script = pages(extract_docs(tmp_path, "shapes", "1.0"))["testing.md"].examples
    assert [e.style for e in (code, tests, fixtures, script)] == ["script", "tests", "tests", "script"]
    assert tests.dependencies == ["pytest"], "its reader runs it with pytest, though it never imports it"
    assert tests.expected_exception == "NameError", "the sentence after it says so"
    assert script.dependencies == []


EXCERPTS_PAGE = """# Tiles

A tile's defaults, as the class declares them:

```python
    side: int = 2
    colour: str = "red"
```

Register the new kind next to the others:

```python
...
shapes.register(Hexagon)
```
"""


def test_a_class_body_shown_indented_and_a_file_with_code_left_out_are_excerpts_not_run(tmp_path):
    (tmp_path / "tiles.md").write_text(EXCERPTS_PAGE)
    fields, edit = pages(extract_docs(tmp_path, "shapes", "1.0"))["tiles.md"].examples
    assert fields.skip_reason == "Not run: it only declares fields: the body of a class, shown without the class."
    assert edit.skip_reason == "Not run: it opens on a lone `...`: the code of the file before it is left out."


TITLED_DROPDOWN_PAGE = """# Stores

````{foldable} Backed by diskcache
```python
import diskcache
import kv
store = kv.Store(diskcache.Cache())
```
````

```{code-block} toml
[store]
kind = "disk"
```

```{store-diagram} toml.stores.Disk
```
"""


def test_the_title_of_a_directive_the_reader_opens_names_a_package_and_another_directives_argument_does_not(tmp_path):
    (tmp_path / "stores.md").write_text(TITLED_DROPDOWN_PAGE)
    analysis = pages(extract_docs(tmp_path, "kv", "1.0"))["stores.md"]
    assert analysis.examples[0].dependencies == ["diskcache"]
    assert "toml" not in analysis.prose_names


WHOLE_BLOCKS_PAGE = """# Registering shapes

Mark a class so the board knows it:

```python
from shapes import register


@register(layer="top")
class Square: ...
```

Read the board's settings:

```python
import shapes

def read_settings():
path = shapes.settings_path()
settings = open(path).read()
```
"""


def test_a_block_that_imports_all_it_uses_and_a_body_left_unindented_are_run(tmp_path):
    (tmp_path / "board.md").write_text(WHOLE_BLOCKS_PAGE)
    registered, unindented = pages(extract_docs(tmp_path, "shapes", "1.0"))["board.md"].examples
    assert registered.execution_context == "sync", "an empty class its imported decorator registers is whole"
    assert unindented.execution_context == "sync", "no comment stands for the body: the reader meets the error"


READERS_FUNCTION_PAGE = """# Indexes

## Custom indexes

```python
def shape_index(options, canvas)
```

To use your own index, give the extension a function that returns it.

## Built-in indexes

```python
def square_index(options, canvas)
```

The index of squares.
"""


def test_a_signature_listed_where_the_page_has_the_reader_write_that_function_is_the_readers_own(tmp_path):
    (tmp_path / "indexes.md").write_text(READERS_FUNCTION_PAGE)
    custom, built_in = pages(extract_docs(tmp_path, "shapes", "1.0"))["indexes.md"].examples
    assert custom.readers_names == ["shape_index"]
    assert built_in.readers_names == [], "one of the library's, to check against it"


BUILDS_ON_PAGE = """# Strategies

```python
import shapes

board = shapes.Board()
```

Each square is drawn on it:

```python
square = board.draw("square")
```

The snippets below assume the `board` defined above:

```python
def test_it_has_a_square():
    assert board.draw("square")
```
"""


def test_blocks_after_a_sentence_saying_they_assume_a_name_defined_above_build_on_the_earlier_blocks(tmp_path):
    (tmp_path / "strategies.md").write_text(BUILDS_ON_PAGE)
    examples = pages(extract_docs(tmp_path, "shapes", "1.0"))["strategies.md"].examples
    assert [e.builds_on_earlier for e in examples] == [False, False, True]


NAMED_MODULES_PAGE = """# Shapes under test

Let's create a `shape_cases.py` file. It will hold the shapes the tests use.

```python
def case_square():
    return 2
```

We write our tests in a `test_shapes.py` file. Each test takes the cases:

```python
def test_side(side):
    assert side > 0
```

A fixture works the same way:

```python
def test_other_side(side):
    assert side < 10
```

Keep notes in a `notes.py` file, or in a `more_notes.py` file.

```python
print("hello")
```
"""


def test_the_paragraph_before_a_block_naming_the_file_it_is_and_later_tests_going_in_the_last_named_module(tmp_path):
    (tmp_path / "shapes.md").write_text(NAMED_MODULES_PAGE)
    analysis = pages(extract_docs(tmp_path, "shapes", "1.0"))["shapes.md"]
    assert [(f.path, f.line) for f in analysis.files] == [
        ("shape_cases.py", 6),
        ("test_shapes.py", 13),
        ("test_shapes.py", 20),
    ], "a paragraph naming two files names neither block"


def test_the_requirements_file_of_an_included_example_project_lists_what_its_reader_installs(tmp_path):
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "requirements.txt").write_text(
        "# the server\nshapes[draw]\nuvicorn  # to serve it\n-r more.txt\n"
    )
    (tmp_path / "project" / "main.py").write_text("import uvicorn\n")
    (tmp_path / "example.md").write_text(
        '# Example\n\n```\n--8<-- "project/requirements.txt"\n```\n\n```py\n--8<-- "project/main.py"\n```\n'
    )
    analysis = pages(extract_docs(tmp_path, "shapes", "1.0"))["example.md"]
    assert [r.requirement for r in analysis.requirements] == ["shapes[draw]", "uvicorn"]
    listed, program = analysis.examples
    assert (listed.execution_context, program.style) == ("not_executable", "script")
    assert "requirements file project/requirements.txt" in listed.skip_reason


PACKAGE_INIT_PAGE = """# Turning it on

```python
# First thing in your "{my_app}.__init__" module:
from shapes import watch_this_package
watch_this_package()
```

To watch it from elsewhere, put these lines at the top of your package's `__init__.py`:

```python
from shapes import watch_this_package
watch_this_package(strict=True)
```

Then, in any script:

```python
# Unlike __init__ methods, this is plain code.
from shapes import watch
watch("circles")
```
"""


def test_a_block_the_page_puts_in_the_readers_package_init_is_that_module(tmp_path):
    (tmp_path / "watching.md").write_text(PACKAGE_INIT_PAGE)
    named, said_before, script = pages(extract_docs(tmp_path, "shapes", "1.0"))["watching.md"].examples
    assert named.package_init == "my_app", "a comment in the block names the reader's package"
    assert said_before.package_init == "your_package", "the sentence before it says it is their package's"
    assert script.package_init is None, "`__init__` said of no package of the reader's"


def test_an_untagged_block_that_opens_with_a_section_header_is_a_configuration_file_not_python(tmp_path):
    (tmp_path / "config.md").write_text(
        "Put this in `.shapes.cfg`:\n\n```\n[settings]\nline_width=100\n```\n\n"
        "Or in `pyproject.toml`:\n\n```\n# the table\n[tool.shapes]\nline_width = 100\n```\n\n"
        "Then draw:\n\n```\nwidths = [100]\nline_width = widths[0]\n```\n"
    )
    examples = pages(extract_docs(tmp_path, "shapes", "1.0"))["config.md"].examples
    assert [e.skip_reason for e in examples[:2]] == [
        "configuration (a `[section]` of an INI or TOML file), not Python"
    ] * 2, "`[settings]` and the `key=value` lines under it parse as Python"
    assert examples[2].style == "untagged" and examples[2].execution_context == "sync", "a program runs"


CAPTIONED_PACKAGE_PAGE = """# A package

`tiles/__init__.py`:

```python
from . import sizes
```

**`tiles/sizes.py`:**

```python
SIDE = 3
```

The module `tiles/sizes.py` holds one constant:

```python
print(3)
```
"""


def test_a_line_that_is_only_a_path_and_a_colon_captions_the_block_under_it_as_that_file(tmp_path):
    (tmp_path / "package.md").write_text(CAPTIONED_PACKAGE_PAGE)
    page = pages(extract_docs(tmp_path, "tiles", "1.0"))["package.md"]
    assert [(f.path, f.line) for f in page.files] == [("tiles/__init__.py", 6), ("tiles/sizes.py", 12)]


LITERAL_RESULT_PAGE = """# Counting

```python
counts = {"short": 1}
print(counts)
```

Rows 2 and 3 are invalid.

Calling it will result in the following dictionary:

```python
{
    "short": 1,
}
```

```python
{"short": 1}
```
"""


def test_a_python_block_of_one_literal_value_a_sentence_presents_as_the_result_is_the_output_of_the_script_before(
    tmp_path,
):
    (tmp_path / "counting.md").write_text(LITERAL_RESULT_PAGE)
    script, shown, plain = pages(extract_docs(tmp_path, "shapes", "1.0"))["counting.md"].examples
    assert (script.expected_output, script.expected_output_line) == ('{\n    "short": 1,\n}\n', 13)
    assert shown.style == "output"
    assert plain.style == "script", "a literal nothing presents as a result is code"


PRINTED_VALUES_PAGE = """# Tokens

```python
tokens = lex("3 14")
print(tokens)
```

Prints out:

```python
[Token(INT, '3'), Token(INT, '14')]
```

```python
table = run(tokens)
```

```python
number count
     3     1
```

And then:

```python
main()
```
"""


def test_a_python_block_showing_a_displayed_value_or_a_printed_table_is_the_output_of_the_script_before(tmp_path):
    (tmp_path / "tokens.md").write_text(PRINTED_VALUES_PAGE)
    printing, value, tabling, table, run = pages(extract_docs(tmp_path, "shapes", "1.0"))["tokens.md"].examples
    assert printing.expected_output == "[Token(INT, '3'), Token(INT, '14')]\n" and value.style == "output"
    assert tabling.expected_output == "number count\n     3     1\n" and table.style == "output"
    assert run.style == "script", "a lone call after a sentence is code"


REPLACED_UPGRADE_PAGE = """# Upgrading to 3.0

Rules are class methods now. This means:

```python
pond.fill_all()
```

turns into

```python
pond.fill()
```

Which prints the depth:

```python
print(pond.depth)
```
"""


def test_a_block_the_words_after_it_say_turns_into_the_next_is_the_old_code_on_an_upgrade_page(tmp_path):
    (tmp_path / "upgrading.md").write_text(REPLACED_UPGRADE_PAGE)
    old, new, after = pages(extract_docs(tmp_path, "shapes", "3.0.1"))["upgrading.md"].examples
    assert old.skip_reason == (
        "Not run: it shows the code from before the change for comparison, on a page about upgrading."
    )
    assert new.skip_reason is None and after.skip_reason is None


DEPRECATIONS_SECTION_PAGE = """# Pipes

```python
total = sum(range(4))
```

## Deprecations

The closing pipes of 1.x returned no iterable:

```python
range(4) | total
```

can be rewritten as:

```python
sum(range(4))
```
"""


def test_a_block_a_deprecations_section_says_is_rewritten_as_the_next_is_the_old_code(tmp_path):
    (tmp_path / "index.md").write_text(DEPRECATIONS_SECTION_PAGE)
    first, old, new = pages(extract_docs(tmp_path, "shapes", "2.2"))["index.md"].examples
    assert old.skip_reason == (
        "Not run: it shows the code from before the change for comparison, on a page about upgrading."
    )
    assert first.skip_reason is None and new.skip_reason is None


COMMENTED_EXPORTS_PAGE = """# Settings

```python
# export SHAPES_SIZE=3
# export SHAPES_HOME=/srv/shapes
from shapes import settings
```

```python
size = settings.size
```
"""


def test_exports_in_a_python_blocks_comments_are_set_before_it_and_a_machine_path_is_left_to_the_reader(tmp_path):
    (tmp_path / "settings.md").write_text(COMMENTED_EXPORTS_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["settings.md"]
    assert [(v.name, v.value) for v in page.environment] == [("SHAPES_SIZE", "3")]
    assert page.environment[0].line < page.examples[0].line


FOREIGN_FILE_PAGE = """# Requirements

```python title="requirements.txt"
shapes>=1.0
pytest==8.3.3
```

```python title="settings.cfg"
size = 3
```
"""


def test_a_python_block_titled_with_a_file_that_is_no_module_and_does_not_parse_is_that_file(tmp_path):
    (tmp_path / "requirements.md").write_text(FOREIGN_FILE_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["requirements.md"]
    listed, parsed = page.examples
    assert (listed.style, listed.skip_reason) == (
        "file",
        "a file the reader creates (requirements.txt); it is written before the examples after it",
    )
    assert [f.path for f in page.files] == ["requirements.txt"]
    assert parsed.style != "file", "Python under another file's name is still run"


CAPTIONED_FILE_PAGE = """# Settings

*shapes.cfg:*

The script reads its settings from a file, so make one:

```python
# settings for draw.py
colour = deep red    # the border
```

*draw.py:*

```python
size = 3
```

*notes.cfg:*

```python
size = 3
```
"""


def test_a_python_block_captioned_with_a_file_that_is_no_module_and_does_not_parse_is_that_file(tmp_path):
    (tmp_path / "settings.md").write_text(CAPTIONED_FILE_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["settings.md"]
    settings, module, parsed = page.examples
    assert (settings.style, settings.skip_reason) == (
        "file",
        "a file the reader creates (shapes.cfg); it is written before the examples after it",
    )
    assert [f.path for f in page.files] == ["shapes.cfg", "draw.py"]
    assert module.style == "script", "a module's caption names the reader's module, run as Python"
    assert parsed.style == "script", "Python under a data file's caption is still run"


SNAPSHOT_PAGE = """# Snapshots

Run your tests so the snapshots are written:

```bash
pip install pytest
python -m pytest -v --snapshot-update tests/
pytest --snapshot-dir snaps test_shapes.py
```

```py
def test_shape(snapshot):
    assert {"sides": 3} == snapshot
```

```py
# name: test_shape
  dict({
    'sides': 3,
  })
```

Broken on purpose:

```py
def broken(:
    pass
```
"""


def test_a_pages_pytest_lines_give_their_long_options_and_a_non_python_block_right_under_an_example_is_output(
    tmp_path,
):
    (tmp_path / "snapshots.md").write_text(SNAPSHOT_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["snapshots.md"]
    assert page.test_options == ["--snapshot-update"], "an option followed by its value is left out"
    _, test, snapshot, broken = page.examples
    assert test.style == "tests"
    assert (snapshot.style, snapshot.skip_reason) == (
        "output",
        f"output: what example {test.code_block_index} (line {test.line}) makes, shown right under it with no words "
        "between; it is no Python",
    )
    assert broken.style == "script", "a block the prose introduces is code, whatever it parses as"
    (tmp_path / "tabs.md").write_text(ADMONITIONS_PAGE)
    _, apart = pages(extract_docs(tmp_path, "shapes", "1.0"))["tabs.md"].examples
    assert apart.style == "script", "a heading between them sets it apart, though the directive has no prose"


ADMONITIONS_PAGE = """# Choices

````{admonition} Shapes
:class: dropdown

```python
sides = 3
```
````

## Broken on purpose

It never closes its bracket.

````{admonition} Shapes
:class: dropdown

```python
sides = [3
```
````
"""


PICTURED_OUTPUT_PAGE = """# Reports

```python
>>> from shapes import report
>>> report()
```

![The report in a terminal](report.png)

```python
>>> report()
```

It prints a table.
"""


def test_a_session_followed_by_a_picture_has_its_output_shown_as_that_picture(tmp_path):
    (tmp_path / "reports.md").write_text(PICTURED_OUTPUT_PAGE)
    pictured, described = pages(extract_docs(tmp_path, "shapes", "1.0"))["reports.md"].examples
    assert pictured.output_pictured and not described.output_pictured


PROSE_IMPORT_PAGE = """# Shapes

Upgrading from 0.9? Replace `from shapes.old import draw` with the new API.

Assuming the library is imported using `import shapes as S`, a square is made with:

```python
>>> S.square(2).area
4
```

```python
import shapes
shapes.square(3)
```
"""


def test_an_import_the_prose_gives_is_typed_from_its_place_on_when_a_later_block_needs_its_name(tmp_path):
    (tmp_path / "shapes.md").write_text(PROSE_IMPORT_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["shapes.md"]
    assert [(s.code, s.source) for s in page.setup] == [("import shapes as S", "shapes.md")]
    assert page.setup[0].line < page.examples[0].line, "typed before the block its paragraph introduces"


APPENDIX_PAGE = """# Shapes

Import the module first:

```python
>>> import shapes

# The sample data the examples use is in the Appendix below.
```

## Areas

```python
>>> shapes.total(sizes)
14
```

## Perimeters

```python
>>> shapes.around(corners)
8
```

## Appendix: sample data

```python
sizes = [2, 3]
```

## More

```python
corners = [1, 1]
```
"""


def test_a_later_section_the_text_sends_its_reader_to_is_run_first_for_the_names_it_defines(tmp_path):
    (tmp_path / "shapes.md").write_text(APPENDIX_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["shapes.md"]
    [appendix] = page.setup
    assert appendix.code.strip() == "sizes = [2, 3]", "a section nothing sends the reader to stays in its place"
    assert appendix.line < page.examples[0].line, "run from the example the text sends its reader from"


COMPARISON_PAGE = """# Shapes

## Why not the standard library?

```python
area = math.pi * radius ** 2
```

```python
import shapes
shapes.circle(2).area
```

## Comparison

```python
area = circle < square
```
"""


def test_code_under_a_heading_weighing_the_library_against_others_that_never_uses_it_is_shown_for_comparison(
    tmp_path,
):
    (tmp_path / "shapes.md").write_text(COMPARISON_PAGE)
    other, own, plain_heading = pages(extract_docs(tmp_path, "shapes", "1.0"))["shapes.md"].examples
    assert other.execution_context == "not_executable"
    assert (
        other.skip_reason
        == 'Not run: under "Why not the standard library?" it shows how it is done without shapes, for comparison.'
    )
    assert own.execution_context != "not_executable", "it uses the library"
    assert plain_heading.execution_context != "not_executable", "comparing shapes is the library's own feature"


PYTHON2_PAGE = """# Shapes

Install it with `pip install shapes-extra`.

```python
import shapes
```

## If you are still on Python2

Use the backport instead: `pip install shapes-backport`.

```python
from backports.shapes import draw
```

```sh
pip install shapes-legacy
```

## Runs on Python 2 and 3

```python
import shapes
```

## Sizes

A shape is a `collections.abc.Sized` (`collections.Sized` on Python 2):

```python
import collections.abc, shapes
```
"""


def test_a_section_for_readers_of_python_2_is_passed_by_with_its_installs(tmp_path):
    (tmp_path / "shapes.md").write_text(PYTHON2_PAGE)
    page = pages(extract_docs(tmp_path, "shapes", "1.0"))["shapes.md"]
    assert [r.requirement for r in page.requirements] == ["shapes-extra"]
    ran, backport, _, both, aside = page.examples
    assert ran.execution_context == both.execution_context == aside.execution_context == "sync"
    assert backport.execution_context == "not_executable" and "Python 2" in backport.skip_reason
