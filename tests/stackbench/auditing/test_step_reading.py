from stackbench.auditing.step_reading import read_step


def test_files_are_named_as_readers_name_them_brackets_and_fence_titles_included():
    step = {
        "contentForUser": (
            "Create `app/artist/[username]/page.tsx`:\n\n```tsx\nexport default 1\n```\n\n"
            "Copy that to a file `main.py`:\n\n```python\nprint(1)\n```\n\n"
            '```python title="example.py"\nprint(2)\n```\n\n'
            "Use `str.format` or `Promise.all` as you like; then open `settings/app.toml`; `other.md` explains more."
        ),
        "operationsForAgent": "",
    }
    plan = read_step(step)
    assert [(a.kind, a.path) for a in plan.actions] == [
        ("file", "app/artist/[username]/page.tsx"),
        ("file", "main.py"),
        ("file", "example.py"),
    ]
    assert plan.paths_to_use == ["settings/app.toml"]


def test_only_the_first_content_tab_is_read():
    content = (
        '=== "npm"\n\n    ```bash\n    npm install x\n    ```\n\n=== "yarn"\n\n    ```bash\n    yarn add x\n    ```\n'
    )
    plan = read_step({"contentForUser": content, "operationsForAgent": ""})
    assert [a.text for a in plan.actions] == ["npm install x"]


def test_what_the_reader_should_see_is_not_a_command_and_scaffolders_are_not_servers():
    step = {
        "contentForUser": "```bash\nnpm create vite@latest my-app\nnpx vite\n```",
        "operationsForAgent": "1. Success indicators: pip prints Successfully installed",
    }
    plan = read_step(step)
    assert [(a.kind, a.text) for a in plan.actions] == [
        ("command", "npm create vite@latest my-app"),
        ("background", "npx vite"),
    ]


def test_a_session_is_typed_one_statement_at_a_time_with_the_output_it_shows():
    plan = read_step({"contentForUser": "```{doctest}\n>>> 1 + 1\n2\n>>> x = 3  # doctest: +SKIP\n```"})
    assert [(a.text, a.mode, a.expected_output, bool(a.skip_reason)) for a in plan.actions] == [
        ("1 + 1\n", "single", "2\n", False),
        ("x = 3  # doctest: +SKIP\n", "single", None, True),
    ]


def test_of_sibling_sections_that_are_ways_to_one_end_only_the_first_or_the_linux_one_is_read():
    ways = "### New project\n\n```bash\nmkdir demo\n```\n\n### Existing project\n\n```bash\ncd demo\n```\n"
    systems = "### On Windows\n\n```bash\nwinget x\n```\n\n### On Linux\n\n```bash\napt-get install x\n```\n"
    parts = (
        "### Install the CLI\n\n```bash\npip install x\n```\n\n### Install the plugin\n\n```bash\npip install y\n```\n"
    )
    assert commands_of(ways) == ["mkdir demo"]
    assert commands_of(systems) == ["apt-get install x"]
    assert commands_of(parts) == ["pip install x", "pip install y"]


def commands_of(content: str) -> list[str]:
    return [action.text for action in read_step({"contentForUser": content}).actions]


def test_a_sentence_after_a_block_that_says_to_save_it_names_its_file():
    step = {
        "contentForUser": (
            "The simplest program:\n\n```python\nprint('hi')\n```\n\nCopy that to a file `main.py`.\n\n"
            "Run it:\n\n```console\n$ python main.py\nhi\n```\n\nSave this as `other.py` later, not the command."
        ),
        "operationsForAgent": "",
    }
    plan = read_step(step)
    assert [(a.kind, a.path or a.text) for a in plan.actions] == [("file", "main.py"), ("command", "python main.py")]
    assert plan.actions[1].expected_output == "hi"


def test_each_command_of_a_console_transcript_expects_the_output_shown_under_it():
    step = {
        "contentForUser": "```console\n$ echo one\none\n\n// and then\n$ echo two\n<b>two</b>\n```\n",
        "operationsForAgent": "",
    }
    plan = read_step(step)
    assert [(a.text, a.expected_output) for a in plan.actions] == [("echo one", "one"), ("echo two", "two")]


def test_trees_banners_after_an_output_intro_and_what_if_commands_are_not_run():
    step = {
        "contentForUser": (
            'If you go to your terminal and type:\n\n<div class="termy">\n\n```bash\nls ./myproject\n```\n\n</div>\n\n'
            "If you haven't already, install it:\n\n```bash\npip install demo\n```\n\n"
            "An option, for example. So, if you put it first, it still works:\n\n```console\n$ ls -l ./myproject\n```\n\n"
            "Start it:\n\n```sh\ndemo serve\n```\n\nThis is what should be output if successful:\n\n"
            "```sh\nStarting up demo\nCORS: disabled\n```\n\nThe folder then looks like this:\n\n"
            "```\n.\n├─ docs\n│  └─ index.md\n└─ package.json\n```\n"
        ),
        "operationsForAgent": "",
    }
    plan = read_step(step)
    assert [(a.kind, a.text.split("\n")[0]) for a in plan.actions] == [
        ("command", "pip install demo"),
        ("command", "demo serve"),
        ("tree", "."),  # what the steps made, as the page shows it: looked for, never run
    ]
    assert plan.actions[1].expected_output == "Starting up demo\nCORS: disabled"
    assert plan.illustrations == ["ls ./myproject", "$ ls -l ./myproject"]


def test_commands_of_the_tabs_not_taken_that_the_operations_name_are_skipped_ways_not_extra_work():
    step = {
        "contentForUser": "::: code-group\n\n```sh [npm]\n$ npm add -D site\n```\n\n```sh [pnpm]\n$ pnpm add -D site\n```\n\n:::\n",
        "operationsForAgent": "1. Run: npm add -D site\n2. Run: pnpm add -D site",
    }
    plan = read_step(step)
    assert [a.text for a in plan.actions] == ["npm add -D site"]
    assert plan.skipped_alternatives == ["pnpm add -D site"]


def test_untagged_python_that_defines_is_code_and_addresses_in_sample_output_are_not_pages_to_open():
    step = {
        "contentForUser": (
            "```python\ndef main(name):\n    pass\n```\n\nA parameter is declared like:\n\n"
            "```\ndef bring(name):\n    pass\n```\n\nStart it:\n\n```bash\ndemo serve --port 8080\n```\n\n"
            "This is what should be output if successful:\n\n```\nAvailable on:\n  https://127.0.0.1:8080\n```\n\n"
            "Then open http://localhost:8080/docs."
        ),
        "operationsForAgent": "",
    }
    plan = read_step(step)
    assert plan.actions[0].expected_output is None
    assert plan.urls == ["http://localhost:8080/docs"]


def test_a_transcript_after_a_sentence_about_a_files_state_is_run_not_compared():
    step = {
        "contentForUser": (
            "The environment now contains what the `pyproject.toml` file lists:\n\n```\n$ pip list\nPackage Version\n```\n"
        ),
        "operationsForAgent": "",
    }
    plan = read_step(step)
    assert [(a.kind, a.text, a.expected_output) for a in plan.actions] == [("command", "pip list", "Package Version")]


def test_a_link_after_the_files_name_does_not_hide_it():
    step = {
        "contentForUser": "Edit the `site.yml` file and add a [`theme`](https://example.org/theme) setting:\n\n```yaml\ntheme: dark\n```\n",
        "operationsForAgent": "",
    }
    (action,) = read_step(step).actions
    assert (action.kind, action.path, action.update) == ("file", "site.yml", True)
