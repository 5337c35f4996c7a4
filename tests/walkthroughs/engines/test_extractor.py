import json

import pytest

from walkthroughs.engines.extractor import extract_docs, module_names_of, slugify

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

Text before.

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
    contexts = [(e.language, e.execution_context) for e in intro]
    assert contexts == [
        ("bash", "not_executable"),
        ("python", "sync"),
        ("python", "async"),
        ("python", "not_executable"),
        ("python", "not_executable"),
        ("python", "not_executable"),
        ("python", "sync"),
        ("python", "sync"),
    ]
    assert [e.is_executable for e in intro][:3] == [False, True, True]


def test_imports_and_third_party_dependencies(docs):
    currying = pages(extract_docs(docs, "toolz", "0.12.1"))["guide/intro.md"].examples[1]
    assert currying.imports == ["toolz", "requests", "yaml"]
    assert currying.dependencies == ["requests", "PyYAML"]
    assert module_names_of("python-dateutil") >= {"dateutil"} and module_names_of("PyYAML") >= {"yaml"}


def test_snippet_includes_are_followed(docs):
    included = pages(extract_docs(docs, "toolz", None))["guide/intro.md"].examples[-1]
    assert included.code == "def helper():\n    return 1\n" and included.snippet_source == "snippets/helper.py"
    assert included.section_hierarchy[-1] == "Included"


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
    from tests.builders import stackbench
    from walkthroughs.engines.formats import ExtractionAnalysis

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
    }
    assert "binary.md" in done.stderr


def test_slugs_follow_github():
    assert slugify("Getting `started`: the *basics*!") == "getting-started-the-basics"
