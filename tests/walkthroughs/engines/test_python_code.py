from walkthroughs.engines.python_code import (
    awaits_at_top_level,
    build_program,
    defined_names,
    dependencies,
    parse,
    undefined_names,
)


def trees(*codes):
    return [parse(code) for code in codes]


def test_names_defined_and_used_come_from_the_syntax_tree():
    tree = parse("import os.path\nfrom a import b as c\nx = 1\ndef f(y):\n    z = y\n    return q\nclass K: pass\n")
    assert defined_names(tree) == {"os", "c", "x", "f", "K"}
    assert undefined_names(tree) == {"q"}


def test_an_example_depends_on_the_earlier_ones_that_define_what_it_uses_transitively():
    examples = trees("import toolz", "data = toolz.identity([1])", "unrelated = 2", "print(len(data))")
    assert dependencies(3, examples) == [0, 1]
    assert dependencies(2, examples) == []


def test_a_name_defined_twice_comes_from_the_latest_earlier_definition():
    examples = trees("value = 1", "value = 2", "print(value)")
    assert dependencies(2, examples) == [1]


def test_later_definitions_are_never_used():
    examples = trees("print(later)", "later = 1")
    assert dependencies(0, examples) == []


def test_top_level_await_is_found_by_parsing_not_by_searching_text():
    assert awaits_at_top_level(parse("import asyncio\nawait asyncio.sleep(0)"))
    assert awaits_at_top_level(parse("async with lock:\n    pass"))
    assert not awaits_at_top_level(parse("async def f():\n    await g()\n"))
    assert not awaits_at_top_level(parse("text = 'await something'"))


def test_an_async_program_runs_the_merged_code_in_asyncio_run_and_maps_lines_back_to_the_page():
    program = build_program([(0, "x = 1\n", 10), (2, "await go(x)\nprint(x)\n", 30)], wrap_async=True)
    assert (
        program.code
        == "import asyncio\n\nasync def main():\n    x = 1\n    await go(x)\n    print(x)\n\nasyncio.run(main())\n"
    )
    assert program.doc_line(4) == (0, 10) and program.doc_line(6) == (2, 31) and program.doc_line(1) is None


def test_a_sync_program_joins_the_parts_in_order():
    program = build_program([(0, "a = 1", 5), (1, "print(a)", 15)], wrap_async=False)
    assert program.code == "a = 1\n\nprint(a)\n"
    assert program.doc_line(3) == (1, 15)
