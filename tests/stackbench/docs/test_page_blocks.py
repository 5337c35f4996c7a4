from stackbench.docs.page_blocks import markdown_blocks, markdown_lists, rst_blocks, slugify


def test_slugs_follow_github():
    assert slugify("Getting `started`: the *basics*!") == "getting-started-the-basics"


def test_a_fence_keeps_its_headings_and_the_prose_before_it():
    page = "# Guide\n\n## Install\n\nRun this first:\n\n```bash\npip install kv\n```\n"
    [block] = markdown_blocks(page)
    assert block.info.language == "bash" and block.code == "pip install kv\n"
    assert block.hierarchy == ["Guide", "Install"] and "Run this first" in block.prose_before
    assert block.line == 8


def test_a_myst_comment_is_no_prose_its_reader_reads():
    page = "# Guide\n\nIt prints the following:\n\n% skip: next\n\n```python\nHelp on area\n```\n"
    [block] = markdown_blocks(page)
    assert block.prose_before == "Guide\nIt prints the following:"


def test_a_fence_in_a_definition_list_has_its_term_as_the_prose_before_it():
    page = "# Install\n\nEnable the cache:\n: ```console\n  $ pip install kv[cache]\n  ```\n"
    [block] = markdown_blocks(page)
    assert block.code == "$ pip install kv[cache]\n" and block.line == 5
    assert "Enable the cache" in block.prose_before


def test_a_fence_inside_an_mkdocs_admonition_or_tab_is_read_as_a_fence():
    page = '!!! note\n\n    ```python\n    x = 1\n    ```\n\n=== "Tab"\n\n    ```python\n    y = 2\n    ```\n'
    assert [block.code for block in markdown_blocks(page)] == ["x = 1\n", "y = 2\n"]


def test_a_tab_inside_a_blockquote_callout_is_opened_behind_the_quote_marks():
    page = (
        "> NOTE: **Two ways**\n"
        "> Pick one:\n"
        ">\n"
        '> === "Short"\n'
        ">     ```python\n"
        ">     import kv\n"
        ">     ```\n"
        ">\n"
        '> === "Long"\n'
        ">     ```python\n"
        ">     import kv as key_value\n"
        ">     ```\n"
        "\n"
        "Back in the page.\n"
    )
    short, long = markdown_blocks(page)
    assert (short.code, short.line) == ("import kv\n", 6)
    assert (long.code, long.line) == ("import kv as key_value\n", 11)
    assert "Pick one" in short.prose_before


def test_a_myst_note_is_read_inside_and_its_fences_found():
    page = (
        "```{note}\nBefore you start:\n\n    print('hi')\n```\n\n```{code-block} python\n:caption: app.py\nz = 3\n```\n"
    )
    blocks = markdown_blocks(page)
    assert blocks[-1].code.strip() == "z = 3" and blocks[-1].options.get("caption") == "app.py"


def test_restructuredtext_code_directives_become_blocks_under_their_section():
    page = "Usage\n=====\n\n.. code-block:: python\n\n   import kv\n   kv.open()\n\nText.\n\n>>> 1 + 1\n2\n"
    blocks = rst_blocks(page)
    assert blocks[0].info.language == "python" and blocks[0].code.splitlines() == ["import kv", "kv.open()"]
    assert blocks[0].hierarchy == ["Usage"]
    assert blocks[1].info.language == "pycon" and blocks[1].code.startswith(">>> 1 + 1")


def test_a_myst_eval_rst_fence_is_read_as_the_rest_it_renders_with_the_lines_of_the_page():
    page = (
        "# Guide\n"
        "\n"
        "Try it:\n"
        "\n"
        "```{eval-rst}\n"
        ".. shapes:example::\n"
        "\n"
        "    import shapes\n"
        "    shapes.draw()\n"
        "\n"
        "And what it prints:\n"
        "\n"
        ".. shapes:run::\n"
        "    invoke(draw)\n"
        "```\n"
    )
    example, run = markdown_blocks(page)
    assert (example.info.directive, example.line, example.code) == (
        "shapes:example",
        8,
        "import shapes\nshapes.draw()\n",
    )
    assert example.hierarchy == ["Guide"] and "Try it:" in example.prose_before
    assert (run.info.directive, run.line) == ("shapes:run", 14)
    assert "what it prints" in run.prose_before


def test_a_rest_directive_holding_rest_is_read_inside_and_one_without_content_gives_no_block():
    page = (
        ".. autofunction:: shapes.draw\n"
        "\n"
        ".. tabs::\n"
        "\n"
        "   .. group-tab:: Linux\n"
        "\n"
        "      .. code-block:: bash\n"
        "\n"
        "         pip install shapes\n"
        "\n"
        ".. note::\n"
        "\n"
        "   >>> 1 + 1\n"
        "   2\n"
        "\n"
        ".. list-table::\n"
        "   :header-rows: 1\n"
        "\n"
        "   * - Name\n"
    )
    blocks = rst_blocks(page)
    assert [(b.info.language, b.info.directive, b.line) for b in blocks] == [
        ("bash", "", 9),
        ("pycon", "", 13),
        ("", "list-table", 19),
    ]
    assert blocks[-1].options == {"header-rows": "1"}


def test_a_rest_literal_block_after_a_paragraph_ending_in_two_colons_is_a_block():
    text = (
        "Shapes\n======\n\n.. autoclass:: Square\n\n   For example::\n\n      square = Square(2)\n"
        "      print(square.area)\n\n   Done.\n\nA plain paragraph with `code::` inside stays prose.\n\n::\n\n    x = 1\n"
    )
    blocks = rst_blocks(text)
    assert [(b.code, b.line, b.prose_before) for b in blocks] == [
        ("square = Square(2)\nprint(square.area)\n", 8, "For example:"),
        ("x = 1\n", 17, "Done. A plain paragraph with `code::` inside stays prose."),
    ]


def test_a_block_keeps_the_text_after_it_up_to_the_next_heading():
    first, second = markdown_blocks("# A\n\n```python\nx = 1\n```\n\nThis fails.\n\n# B\n\n```python\ny = 2\n```\n")
    assert (first.prose_after, second.prose_before) == ("This fails.", "B")
    assert second.prose_after == ""


def test_a_myst_directive_of_an_unknown_extension_that_nests_fences_is_read_as_markdown():
    page = (
        "# Stores\n\n"
        "````{foldable} In memory\n"
        ":open:\n\n"
        "```python\nimport kv\nstore = kv.memory()\n```\n"
        "````\n\n"
        "````{code-block} markdown\n```python\nnot read\n```\n````\n"
    )
    nested, shown = markdown_blocks(page)
    assert (nested.info.language, nested.code, nested.line) == ("python", "import kv\nstore = kv.memory()\n", 7)
    assert nested.hierarchy == ["Stores"]
    assert shown.info.directive == "code-block" and "not read" in shown.code


def test_lists_keep_their_headings_and_items_and_a_fence_holding_list_lines_is_none():
    page = (
        "# Install\n\n## Backends\n\n- `qt`: one\n  - nested\n- `tk`: two\n\n"
        "```md\n- not a list\n```\n\n## Extras\n\n1. first\n"
    )
    nested, backends, extras = markdown_lists(page)
    assert (nested.hierarchy, nested.items) == (["Install", "Backends"], ["nested"])
    assert backends.items == ["`qt`: one", "`tk`: two"] and extras.hierarchy == ["Install", "Extras"]
