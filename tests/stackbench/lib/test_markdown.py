from stackbench.lib.markdown import (
    fence_info,
    fenced_blocks,
    info_language,
    render_markdown,
    without_fenced_blocks,
)

PAGE = """# Title

Intro with `code`.

```python title="app.py"
print("a")
```

Between.

~~~bash
echo b
~~~

    indented code is not a fence

````md
```python
nested
```
````
End.
"""


def test_backtick_and_tilde_fences_are_both_found_with_the_line_their_code_starts_on():
    blocks = fenced_blocks(PAGE)
    assert [(b.language, b.line) for b in blocks] == [("python", 6), ("bash", 12), ("md", 18)]
    assert blocks[0].info == 'python title="app.py"' and blocks[0].content == 'print("a")\n'
    assert blocks[2].content == "```python\nnested\n```\n"


def test_the_prose_is_what_remains_without_the_fences():
    prose = without_fenced_blocks(PAGE)
    assert "Intro with `code`." in prose and "Between." in prose and "End." in prose
    assert 'print("a")' not in prose and "echo b" not in prose and "nested" not in prose
    assert "indented code is not a fence" in prose


def test_an_unclosed_fence_runs_to_the_end_of_the_text():
    blocks = fenced_blocks("Text\n\n```sh\nls\n")
    assert [(b.language, b.content) for b in blocks] == [("sh", "ls\n")]
    assert without_fenced_blocks("Text\n\n```sh\nls\n").strip() == "Text"


def test_a_fence_in_a_definition_list_is_a_fence_with_the_line_its_code_starts_on():
    text = "Add the cache:\n: ```console\n  $ pip install kv[cache]\n  ```\n\nMore text.\n"
    [block] = fenced_blocks(text)
    assert (block.language, block.content, block.line) == ("console", "$ pip install kv[cache]\n", 3)
    assert "More text." in without_fenced_blocks(text) and "pip install" not in without_fenced_blocks(text)


def test_the_language_of_an_info_string():
    assert [info_language(i) for i in ("Python", "{python}", "{.python}", "bash title=x", "", None)] == [
        "python",
        "python",
        "python",
        "bash",
        "",
        "",
    ]


def test_display_options_vuepress_writes_onto_the_language_are_not_part_of_it():
    assert [info_language(i) for i in ("bash:no-line-numbers", "python{2,4}", "py:line-numbers=5 {1}")] == [
        "bash",
        "python",
        "py",
    ]


def test_a_fence_with_only_attributes_names_no_language():
    assert info_language('title="/var/run/secret"') == ""
    assert fence_info('title="/var/run/secret"').attribute("title") == "/var/run/secret"
    assert fence_info('bash title=".env"') == fence_info("bash").__class__("bash", attributes=(("title", ".env"),))


def test_myst_directives_are_told_apart_from_languages():
    assert fence_info("{doctest} ctx").directive == "doctest"
    assert fence_info("{doctest} ctx").argument == "ctx"
    assert fence_info("{code-block} python").language == "python"
    assert fence_info("{testsetup} *").argument == "*"
    assert info_language("{code-block} python") == "python"
    assert info_language("{doctest}") == "doctest"


def test_a_code_group_tab_label_is_read_beside_the_language():
    assert fence_info("python [1.x]") == fence_info("python").__class__("python", label="1.x")
    assert fence_info('py [Before] title="app.py"').label == "Before"
    assert fence_info("python").label == ""


def test_rendering_escapes_html_and_refuses_script_links():
    html = render_markdown("<script>x</script> [a](javascript:alert(1))")
    assert "<script>" not in html and 'href="javascript:' not in html


def test_the_code_colour_sheet_is_the_one_pygments_makes_for_the_rendered_classes():
    from pygments.formatters import HtmlFormatter

    from stackbench_site.settings import BASE_DIR

    sheet = (BASE_DIR / "static" / "css" / "pygments.css").read_text().split("\n", 1)[1]
    assert sheet.strip() == HtmlFormatter(classprefix="hl-").get_style_defs(".highlight").strip()


def test_a_findings_text_shows_underscores_and_stars_as_typed_and_keeps_code_and_links():
    from stackbench.lib.markdown import render_inline

    assert render_inline("Edit __init__.py and *.txt") == "Edit __init__.py and *.txt"
    assert render_inline("Run `__init__.py`, see [docs](https://x.org/a_b)") == (
        'Run <code>__init__.py</code>, see <a href="https://x.org/a_b">docs</a>'
    )
