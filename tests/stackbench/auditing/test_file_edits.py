import json

from stackbench.auditing.file_edits import apply_edit

APP = 'import os\n\n\ndef greet():\n    return "hi"\n\n\nprint(greet())\n'


def test_a_python_block_redefining_a_function_replaces_only_that_function():
    text, how = apply_edit(APP, 'import sys\n\ndef greet():\n    return "hello"\n', "app.py")
    assert how == "merged"
    assert text.startswith("import sys\nimport os\n")
    assert 'return "hello"' in text and 'return "hi"' not in text and text.rstrip().endswith("print(greet())")


def test_new_python_definitions_are_added_at_the_end():
    text, how = apply_edit(APP, "def wave():\n    return 1\n", "app.py")
    assert how == "merged" and text.rstrip().endswith("def wave():\n    return 1")


def test_a_python_block_with_everything_the_file_had_is_the_whole_file():
    block = 'def greet():\n    return "yo"\n\nprint(greet(), "!")\n'
    assert apply_edit(APP, block, "app.py") == (block, "replaced")


def test_a_block_that_starts_as_a_file_starts_is_the_whole_file():
    assert apply_edit("a\nb\nc\nd\n", '"use client"\nexport default 1\n', "page.tsx")[1] == "replaced"


def test_a_short_block_for_another_kind_of_file_is_appended():
    text, how = apply_edit("a=1\nb=2\nc=3\nd=4\n", "e=5\n", "settings.ini")
    assert (text, how) == ("a=1\nb=2\nc=3\nd=4\ne=5\n", "appended")


def test_a_toml_block_replaces_the_table_it_declares_and_adds_new_ones():
    existing = '[project]\nname = "demo"\n\n[tool.demo]\nlevel = 1\n'
    text, how = apply_edit(existing, "[tool.demo]\nlevel = 2\n\n[tool.other]\nx = 1\n", "pyproject.toml")
    assert how == "merged"
    assert text == '[project]\nname = "demo"\n\n[tool.demo]\nlevel = 2\n\n[tool.other]\nx = 1\n'


def test_a_json_block_merges_into_the_file_by_key_its_ellipsis_standing_for_the_rest():
    existing = '{\n  "name": "site",\n  "devDependencies": {"vitepress": "2.0.0"},\n  "scripts": {"test": "x"}\n}\n'
    block = '{\n  ...\n  "scripts": {\n    "docs:dev": "vitepress dev docs",\n  },\n  ...\n}\n'
    text, how = apply_edit(existing, block, "package.json")
    assert how == "merged"
    assert json.loads(text) == {
        "name": "site",
        "devDependencies": {"vitepress": "2.0.0"},
        "scripts": {"test": "x", "docs:dev": "vitepress dev docs"},
    }
