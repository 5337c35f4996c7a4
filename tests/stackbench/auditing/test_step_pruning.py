from stackbench.auditing.step_pruning import first_branch_only, first_tabs_only, first_way_only, placeholders


def test_only_the_first_tab_of_a_group_is_kept_dedented():
    content = '=== "npm"\n\n    npm install x\n\n=== "yarn"\n\n    yarn add x\nAfter.'
    assert first_tabs_only(content) == "\nnpm install x\n\nAfter."


def test_of_sibling_sub_sections_for_systems_the_linux_one_is_kept():
    content = "Intro\n### On Windows\nwinget x\n### On Linux\napt-get install x\n"
    assert first_branch_only(content) == "Intro\n### On Linux\napt-get install x\n"
    parts = "### Install the CLI\na\n### Install the plugin\nb\n"
    assert first_branch_only(parts) == parts


def test_a_shell_block_of_one_way_per_tool_keeps_the_first_and_names_the_others():
    block = "# npm\nnpm install x\n\n# yarn\nyarn add x\n\n# pnpm\npnpm add x\n"
    assert first_way_only(block) == ("# npm\nnpm install x\n", ["yarn add x", "pnpm add x"])
    assert first_way_only("npm install x\n\nnpm test\n") == ("npm install x\n\nnpm test\n", [])


def test_a_placeholder_is_explained_when_the_prose_says_what_to_put_there():
    prose = "Replace <your key> with the key from your account."
    assert placeholders("curl -H 'X: <your key>' -d YOUR_TOKEN", prose) == [("<your key>", True), ("YOUR_TOKEN", False)]


def test_the_first_tab_of_vitepress_pymdown_docusaurus_and_sphinx_design_groups_is_the_way_read():
    markdown = (
        "Install:\n\n::: code-group\n\n```sh [npm]\n$ npm add -D site\n```\n\n```sh [pnpm]\n$ pnpm add -D site\n```\n\n"
        ":::\n\nThen:\n\n/// tab | pip\n```bash\npip install x\n```\n///\n\n/// tab | uv\n```bash\nuv add x\n```\n"
        '///\n\nAfter:\n\n<Tabs>\n<TabItem value="npm">\n\n```bash\nnpm i a\n```\n\n</TabItem>\n'
        '<TabItem value="yarn">\n\n```bash\nyarn add a\n```\n\n</TabItem>\n</Tabs>\n\n'
        "::::{tab-set}\n:::{tab-item} pip\n:sync: pip\n```bash\npip install y\n```\n:::\n"
        ":::{tab-item} conda\n```bash\nconda install y\n```\n:::\n::::\nEnd.\n"
    )
    kept = [line for line in first_tabs_only(markdown).splitlines() if line.startswith(("$", "pip", "npm"))]
    assert kept == ["$ npm add -D site", "pip install x", "npm i a", "pip install y"]
