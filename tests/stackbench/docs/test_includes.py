from stackbench.docs.includes import expand


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_myst_include_is_replaced_by_the_chosen_part_and_remembers_its_origin(tmp_path):
    docs = tmp_path / "docs"
    write(tmp_path, "CHANGES.md", "# Changes\nskipped\n<!-- begin -->\n\nkept one\nkept two\n<!-- end -->\ntail\n")
    page = write(
        docs,
        "changes.md",
        "Intro\n```{include} ../CHANGES.md\n:start-after: <!-- begin -->\n:end-before: <!-- end -->\n```\nAfter\n",
    )
    expanded = expand(page, docs)
    assert expanded.text == "Intro\n\nkept one\nkept two\nAfter\n"
    assert expanded.origin(3).source == "../CHANGES.md" and expanded.origin(3).line == 5
    assert expanded.origin(5).source == "changes.md" and expanded.origin(5).line == 6
    assert expanded.included == ["../CHANGES.md"]


def test_a_literalinclude_becomes_a_fence_in_the_files_language(tmp_path):
    docs = tmp_path / "docs"
    write(docs, "examples/app.py", "import os\nprint(os.sep)\n")
    page = write(docs, "page.md", "```{literalinclude} examples/app.py\n:lines: 2\n```\n")
    expanded = expand(page, docs)
    assert expanded.text.split("\n")[:3] == ["```python", "print(os.sep)", "```"]
    assert expanded.origin(2).source == "examples/app.py" and expanded.origin(2).line == 2


def test_mkdocs_snippets_take_line_ranges_and_named_sections(tmp_path):
    docs = tmp_path / "docs"
    write(docs, "src/demo.py", "one\n# --8<-- [start:middle]\ntwo\n# --8<-- [end:middle]\nthree\n")
    page = write(docs, "page.md", '--8<-- "src/demo.py:1:1"\n--8<-- "src/demo.py:middle"\n')
    expanded = expand(page, docs)
    assert expanded.text.split("\n")[:2] == ["one", "two"]
    assert expanded.origin(2).line == 3


def test_an_include_outside_the_project_or_missing_stays_as_written(tmp_path):
    docs = tmp_path / "project" / "docs"
    write(tmp_path, "secret.md", "do not read\n")
    page = write(docs, "page.md", "```{include} ../../secret.md\n```\n{!missing.md!}\n")
    expanded = expand(page, docs)
    assert "do not read" not in expanded.text and "{!missing.md!}" in expanded.text


def test_vuepress_and_vitepress_code_imports_become_fences_of_the_file(tmp_path):
    docs = tmp_path / "docs"
    write(docs, "examples/app.py", "import os\n# #region main\nprint(os.sep)\n# #endregion main\nprint(os.name)\n")
    page = write(
        docs,
        "guide/page.md",
        "Whole file:\n"
        "@[code python](../examples/app.py)\n"
        "Lines two to three:\n"
        "@[code{2-3}](../examples/app.py)\n"
        "A region, from the docs folder:\n"
        "<<< @/examples/app.py#main{1 py} [app.py]\n",
    )
    expanded = expand(page, docs)
    lines = expanded.text.split("\n")
    assert lines[1:8] == [
        "```python",
        "import os",
        "# #region main",
        "print(os.sep)",
        "# #endregion main",
        "print(os.name)",
        "```",
    ]
    assert lines[9:13] == ["```python", "# #region main", "print(os.sep)", "```"]
    assert lines[14:17] == ["```py", "print(os.sep)", "```"]
    assert expanded.origin(3).source == "examples/app.py" and expanded.origin(3).line == 1
    assert expanded.origin(16).line == 3, "a region starts after its marker"
    assert expanded.origin(17).source == "guide/page.md" and expanded.origin(17).line == 6


def test_a_snippet_is_also_looked_for_from_the_project_where_mkdocs_runs(tmp_path):
    docs = tmp_path / "docs"
    write(tmp_path, "tools/report.py", "print('made by the build')\n")
    page = write(docs, "about.md", '```python\n--8<-- "tools/report.py"\n```\n')
    expanded = expand(page, docs)
    assert expanded.text.split("\n")[:3] == ["```python", "print('made by the build')", "```"]
    assert expanded.origin(2).source == "../tools/report.py"


def test_a_fastapi_style_code_include_from_the_project_becomes_a_fence_of_the_file_or_its_lines(tmp_path):
    docs = tmp_path / "docs"
    write(tmp_path, "docs_src/first/app.py", "import sys\n\n\ndef main():\n    print(sys.argv)\n")
    page = write(
        docs,
        "tutorial/first.md",
        "Whole:\n\n{* docs_src/first/app.py hl[4] *}\n\nSome lines:\n\n{* docs_src/first/app.py ln[4:5] hl[5] *}\n",
    )
    expanded = expand(page, docs)
    lines = expanded.text.split("\n")
    assert lines[2:9] == ["```python", "import sys", "", "", "def main():", "    print(sys.argv)", "```"]
    assert lines[12:16] == ["```python", "def main():", "    print(sys.argv)", "```"]
    assert expanded.origin(14).source == "../docs_src/first/app.py" and expanded.origin(14).line == 4
