import pytest

from stackbench.docs import python_code
from stackbench.docs.python_code import (
    argument_places,
    awaits_at_top_level,
    body_excerpt,
    builds_a_set,
    class_body_excerpt,
    comment_shows_message,
    commented_body,
    continuations_prompted,
    defined_names,
    definitions_prompted,
    dependencies,
    documented_output,
    documented_prints,
    elided_fields,
    ellipsis_gap,
    ellipsis_syntax_gap,
    exits_as_written,
    fill_in,
    first_uses,
    fixture_names,
    fragment,
    is_literal_value,
    is_session,
    is_sketch,
    is_test_module,
    left_out_code,
    listed_signatures,
    misspelt_special_method,
    names_at,
    newer_syntax,
    only_entries,
    parse,
    placeholder_path,
    prompt_line,
    prompts_spaced,
    prose_gap,
    reads_as_code,
    required_variables,
    said_after_to_fail,
    said_in_test_to_fail,
    said_to_raise,
    session_parts,
    session_source,
    session_statements,
    settings_with_colons,
    signatures_only,
    skeleton_body,
    string_names,
    template_slot,
    undefined_names,
    used_in_functions,
    value_comments,
    without_documented_output,
    without_old_release,
)


def trees(*codes):
    return [parse(code) for code in codes]


def test_the_names_code_defines_are_none_when_it_does_not_parse():
    assert python_code.defined_by("import os\ndef f(): pass\n") == {"os", "f"}
    assert python_code.defined_by("def broken(:\n") == set()


def test_names_defined_and_used_come_from_the_syntax_tree():
    tree = parse("import os.path\nfrom a import b as c\nx = 1\ndef f(y):\n    z = y\n    return q\nclass K: pass\n")
    assert defined_names(tree) == {"os", "c", "x", "f", "K"}
    assert undefined_names(tree) == {"q"}


def test_an_example_depends_on_the_earlier_ones_that_define_what_it_uses_transitively():
    examples = trees("import toolz", "data = toolz.identity([1])", "unrelated = 2", "print(len(data))")
    assert dependencies(3, examples) == [0, 1]
    assert dependencies(2, examples) == []


def test_an_example_also_builds_on_the_earlier_ones_that_change_its_objects_in_place():
    examples = trees(
        "container = Container()",
        "container.register('url', instance='db://')",
        "settings.debug = True",
        "cache['k'] = 1",
        "print(container.resolve('url'))",
    )
    assert dependencies(4, examples) == [0, 1], "the registration, not what other objects went through"
    assert dependencies(1, examples) == [0]
    configured = trees("import logkit", "logkit.configure(json=True)", "logkit.get_logger().info('hi')")
    assert dependencies(2, configured) == [0], "a module's functions called on it are no object changed"


def test_a_name_defined_twice_comes_from_the_latest_earlier_definition():
    examples = trees("value = 1", "value = 2", "print(value)")
    assert dependencies(2, examples) == [1]


def test_a_definition_that_may_not_have_run_also_needs_the_one_before_it():
    examples = trees("value = 1", "other = 0", "value = 2", "print(value)")
    assert dependencies(3, examples, unsettled={2}) == [0, 2]


def test_an_earlier_example_that_shadows_a_builtin_is_what_a_later_one_builds_on():
    examples = trees("hash = make_hash('secret')", "print(len('x'))", "check('secret', hash)")
    assert dependencies(2, examples) == [0] and dependencies(1, examples) == []


def test_a_block_showing_the_old_release_above_the_new_keeps_only_the_new_part_on_its_lines():
    shown = "# Before (v2)\ndf = Schema.read('a')\n\n# After (v3)\ndf = read('a')\n"
    assert without_old_release(shown) == "# Before (v2)\n\n\n# After (v3)\ndf = read('a')\n"
    told = "# Before we start:\nx = 1\n# After that, y\ny = 2\n"
    assert without_old_release(told) == told, "a comment that only starts with the word is prose"


def test_later_definitions_are_never_used():
    examples = trees("print(later)", "later = 1")
    assert dependencies(0, examples) == []


def test_top_level_await_is_found_by_parsing_not_by_searching_text():
    assert awaits_at_top_level(parse("import asyncio\nawait asyncio.sleep(0)"))
    assert awaits_at_top_level(parse("async with lock:\n    pass"))
    assert not awaits_at_top_level(parse("async def f():\n    await g()\n"))
    assert not awaits_at_top_level(parse("text = 'await something'"))


def test_a_session_starts_at_a_prompt_even_after_a_comment():
    assert is_session(">>> 1 + 1\n2\n")
    assert is_session("\n# first, a comment\n>>> x = 1\n")
    assert session_statements("# note\n>>> a = 1\n>>> a\n1\n") == 2


def test_a_definition_typed_before_the_prompts_is_part_of_the_session():
    text = "def double(x):\n    return 2 * x\n\n>>> double(2)\n4\n"
    prefix, session = session_parts(text)
    assert prefix.startswith("def double") and session.startswith(">>> double(2)")
    assert session_source(text) == "def double(x):\n    return 2 * x\ndouble(2)\n"


def test_a_program_whose_docstring_holds_doctests_is_no_session():
    program = 'class Dropper:\n    def __call__(self):\n        """\n        >>> Dropper()()\n        """\n'
    assert not is_session(program)
    assert session_parts("x = (\n>>> 1\n") is None, "text before the prompts must be code"


@pytest.mark.parametrize(
    "code",
    [
        "x: tuple[int, ...] = (1,)",
        "values[1:...]",
        "def stub(): ...",
        "class Protocol:\n    def method(self) -> int: ...",
        "name: str = Field(...)",
        "if ready:\n    ...",
        "assert marker is ...",
    ],
)
def test_an_ellipsis_in_a_type_a_slice_a_stub_or_a_required_field_is_no_gap(code):
    assert ellipsis_gap(parse(code)) is None


def test_an_assigned_ellipsis_whose_comment_says_what_the_library_makes_of_it_is_a_value_not_a_gap():
    code = "class Options:\n    strict = True\n    extra = ...  # interpreted as a check with no arguments\n"
    assert ellipsis_gap(parse(code), code) is None
    shown = "class Options:\n    extra = ...  # your value\n"
    assert ellipsis_gap(parse(shown), shown) == 2


@pytest.mark.parametrize(
    "code, line",
    [
        ("client = Client(...)", 1),
        ("token = ...", 1),
        ("import x\nrenderer.columns = [\n    ...\n]", 2),
        ("options = {'key': ...}", 1),
        ("for row in ...:\n    pass", 1),
        ("import shapes\nassert shapes.area(2) == ...", 2),
    ],
)
def test_an_ellipsis_standing_for_the_readers_code_is_a_gap_at_its_line(code, line):
    assert ellipsis_gap(parse(code)) == line


def test_an_ellipsis_line_among_entries_without_a_comma_is_a_gap_not_a_syntax_error():
    code = "tiles = [\n    ...\n    Tile('corner')\n]\n"
    assert ellipsis_syntax_gap(code) == 2
    assert ellipsis_syntax_gap("tiles = [\n    Tile('a')\n    Tile('b')\n]\n") is None, "a missing comma is a mistake"


def test_an_ellipsis_among_a_functions_parameters_stands_for_the_others_and_a_broken_list_stays_a_mistake():
    template = "def factory(size, color=None, ..., *args):\n    return draw(size, color, .., *args)\n"
    assert ellipsis_syntax_gap(template) == 1
    assert ellipsis_syntax_gap("def factory(size, ..., color=None:\n    pass\n") is None, "an unclosed list"


def test_an_ellipsis_line_after_keyword_arguments_stands_for_the_other_arguments():
    assert ellipsis_syntax_gap("draw(\n    shape='tile',\n    ...,\n)\n") == 3
    assert ellipsis_syntax_gap("draw(shape='tile', 'red')\n") is None, "a positional after a keyword is a mistake"


def test_a_yield_or_return_outside_any_function_is_an_excerpt_of_a_functions_body():
    assert body_excerpt(parse("# a painter's steps\nyield Stroke('red')\nyield Stroke('blue')\n")) == 2
    assert body_excerpt(parse("if ready:\n    return tiles\n")) == 2
    assert body_excerpt(parse("def strokes():\n    yield 1\n\nlist(strokes())\n")) is None


def test_words_in_parentheses_where_code_goes_are_prose_standing_for_the_readers_code():
    assert prose_gap("import shapes\ndef tile_ready(your checks go here)\nshapes.draw()\n") == (
        2,
        "your checks go here",
    )
    assert prose_gap("draw(x for x in tiles\n") is None, "Python's own words"
    assert prose_gap("draw(red blue)\n") is None, "two names side by side are a missing comma"
    assert prose_gap("draw(tile)\n") is None


def test_a_name_in_braces_or_angle_brackets_that_keeps_code_from_parsing_is_a_templates_slot():
    assert template_slot("{tile}: {kind} = {value}\ncheck({tile}, {kind})\n") == (1, "{tile}")
    assert template_slot("import shapes\nshapes.draw(<tile>)\n") == (2, "<tile>")
    assert template_slot("tiles = {corner, edge}\nprint(f'{tiles}')\n") is None, "a set and an f-string parse"
    assert template_slot("print(f'{tile}'\n") is None, "an unclosed call is a mistake, slots or not"
    assert template_slot("{tile}: int = 1\ndraw(\n") is None, "the code fails for another reason too"


def test_a_block_that_only_builds_objects_it_keeps_nowhere_shows_entries():
    assert only_entries(parse("Tile('corner', edge)\nTile('middle', edge, rotate=True)\n")) == "Tile"
    assert only_entries(parse("shapes.Tile('corner')\n")) == "Tile"
    assert only_entries(parse("tile = Tile('corner')\n")) is None, "a program keeps what it builds"
    assert only_entries(parse("draw(Tile('corner'))\n")) is None, "a call that acts"
    assert only_entries(parse("Tile('corner').draw()\n")) is None


def test_a_decorated_class_with_an_ellipsis_body_has_its_fields_left_out():
    assert elided_fields(parse("@record\nclass Tile:\n    ...\n\nsave(Tile())\n")) == "Tile"
    assert elided_fields(parse("class TileError(Exception): ...\n\nraise TileError()\n")) is None
    assert elided_fields(parse("@record\nclass Tile:\n    side: int\n")) is None
    beside_fields = (
        "@record\nclass Blank:\n    ...\n\n@record\nclass Board:\n    tiles: list[Blank]\n\nsave(Board([]))\n"
    )
    assert elided_fields(parse(beside_fields)) is None, "the block writes fields out where a class has them"


def test_placeholders_are_values_to_fill_in_not_environment_variable_names():
    assert fill_in('client = Client(api_key="<your-api-key>")') == "<your-api-key>"
    assert fill_in("token = 'YOUR_TOKEN'") == "YOUR_TOKEN"
    assert fill_in("os.environ['MY_FOO'] = 'bar'") is None
    assert fill_in("secret = os.environ['SERVICE_KEY']") is None


def test_a_secret_written_plainly_is_a_value_that_signs_as_well_as_any_and_an_api_key_still_a_placeholder():
    assert fill_in('key = OctKey.import_key("your-secret-key")') is None
    assert fill_in('hashed = hasher.hash("your-password")') is None
    assert fill_in('client = Client(api_key="your-api-key")') == "your-api-key"


def test_the_last_part_of_a_dotted_name_written_as_what_goes_there_is_a_placeholder():
    assert fill_in("shapes.load('shapes.<kind>')") == "<kind>"
    assert fill_in("html = '<p>shapes</p>'") is None and fill_in("route('/shapes/<kind>')") is None


def test_a_part_of_a_name_or_path_to_pick_is_filled_in():
    assert fill_in("load(plugins=['shapes.plugins.<name>'])") == "<name>"
    assert fill_in("html = '<div>' + text + '</div>'") is None, "markup is no placeholder"
    assert fill_in("if a<b>c: pass") is None


def test_a_path_of_the_readers_own_is_told_from_a_path_of_the_page():
    assert placeholder_path('draw("path/to/drawing.svg", "out")') == "path/to/drawing.svg"
    assert placeholder_path("draw('/path/to/drawing.svg')") == "/path/to/drawing.svg"
    assert placeholder_path("open('path_to_file/conf.toml', 'wb')") == "path_to_file/conf.toml"
    assert placeholder_path('open("xpath_to_file/conf.toml")') is None
    assert placeholder_path('draw("xpath/to/drawing.svg")') is None
    assert placeholder_path('draw("drawings/path.svg")') is None


def test_a_placeholder_inside_a_documented_output_or_a_comment_is_not_code():
    code = 'print(load())\n"""\n{\'api_key\': \'your-api-key\'}\n"""\n# use your-api-key here\n'
    assert fill_in(code) == "your-api-key"
    assert fill_in(without_documented_output(code, parse(code))) is None


def test_each_documented_print_carries_its_own_lines():
    code = (
        "print(1)\n#> 1\n"
        "try:\n    fail()\nexcept ValueError as e:\n    print(e)\n    '''\n    bad value\n    '''\n"
        "'''not under a print: prose'''\n"
    )
    shown = documented_prints(code, parse(code))
    assert [(item.first_line, item.text) for item in shown] == [(1, "1"), (6, "bad value")]
    assert documented_output(code, parse(code)) == "1\nbad value"


def test_a_multiline_print_documents_its_output_after_its_last_line():
    code = "print(\n    {'a': 1}\n)\n#> {'a': 1}\n"
    assert [(item.first_line, item.last_line) for item in documented_prints(code, parse(code))] == [(1, 3)]


def test_syntax_of_newer_pythons_is_recognised():
    assert newer_syntax("type Alias = list[int]\n")[0] == "3.12"
    assert newer_syntax("class Box[T]:\n    item: T\n")[0] == "3.12"
    assert newer_syntax("kind = type(value)\n") is None


def test_a_fragment_is_told_from_a_broken_program():
    assert fragment("@click.option('--upper')\n") == "decorators shown without the function they decorate"
    assert fragment("def connect(host: str, port: int = 80) -> Connection:") is not None
    assert fragment("if shapes.ready():\n") == "a header shown without its body"
    assert fragment("def paint(canvas, colour) -> Stroke") == (
        "signatures listed for reference (parameters, their types and defaults, no body to run)"
    )
    assert fragment("print('unclosed'") is None
    assert fragment("x = 1\n") is None


@pytest.mark.parametrize(
    "listing",
    [
        "def area(side: float)\n",
        "def area(side: float) -> float\n",
        "def area(side,  # type: float\n         ):\n",
        "@shape(name: str = None, *, filled: bool = False)\n",
        "Square(side: float)\n",
        "Square(side, colour='red')\n    -> <Shape>\n",
        "def make(kind: str) -> Tuple[<Shape>, ...]\n",
        "def make(kind: str, kind: int)\n",
        "Kind = Union[str, int]\n\ndef make(kind: Kind) -> Shape\n\ndef draw(shape: Shape) -> None\n",
        "def area(side: Side) -> float:\n    ...\n",
        'def area(side: Side) -> float:\n    """The area."""\n    ...\n\ndef edge(side: Side) -> float: ...\n',
    ],
)
def test_signatures_listed_for_reference_are_a_fragment_not_code_to_run(listing):
    assert signatures_only(listing)
    assert fragment(listing) == "signatures listed for reference (parameters, their types and defaults, no body to run)"


@pytest.mark.parametrize(
    "code",
    [
        "def area(side):\n    ...\n\nprint(area(2))\n",
        "def side(): ...\n\ndef area(length: Annotated[int, Use(side)]): ...\n",
        "@shapes.hook\ndef on_draw(shape: Shape) -> None: ...\n",
        "def area(side):\n    return side * side\n",
        "shape = Square(2)\n\ndef area(side: float) -> float: ...\n",
        "def area(side: float)\n    return side * side\n",
        "class Square(Shape)\n    # yours\n",
        "square(2)\n",
    ],
)
def test_a_function_the_block_uses_registers_or_fills_in_is_code_not_a_signature(code):
    assert not signatures_only(code)


@pytest.mark.parametrize(
    "code, said",
    [
        ("f(1)  # raises TypeError", ("TypeError", 1)),
        ("f(1)  # TypeError: f takes no arguments", ("TypeError", 1)),
        ("f(1)  # -> KeyError", ("KeyError", 1)),
        ("f(1)  # error!", ("Exception", 1)),
        ("assert f(1)  # this will fail! (2)", ("Exception", 1)),
        ("# the reader's call: immediate error\nf(1, 2)", ("Exception", 2)),
        ("f(1, 2)  # with two arguments: TypeError", ("TypeError", 1)),
        ("f(1)  # see: the error", None),
        ("f(1)  # raises an error", ("Exception", 1)),
        ("x = 1\n# fails\nf(x)", ("Exception", 3)),
        ("f(1)  # fails silently", None),
        ("f(1)  # raises a DeprecationWarning", None),
        ("f(1)  # error handling", None),
        ("def g():\n    f(1)  # raises TypeError", None),
        ("try:\n    # raises KeyError\n    d['x']\nexcept KeyError:\n    pass\nprint(d)", None),
        ("# raises KeyError\n\nd = {}\n", ("KeyError", 3)),
        ("x = d['b']  # looks up b, raises KeyError as none was set", ("KeyError", 1)),
        ("# Now it will raise `LookupError`.\nf(1)", ("LookupError", 2)),
        ("# immediate error\nf(1)", ("Exception", 2)),
        ("f(1)  # it never raises KeyError", None),
        ("f(1)  # reads d, raises KeyError if d is empty", None),
        ("d.freeze()  # from now on any attempt to change it will raise a TypeError", None),
        ("x = [f(1)]  # Not a direct call, raises UsageError", ("UsageError", 1)),
        ("# Freeze it: trying to set a key then raises TypeError.\nd.freeze()", None),
        ("f(2)\n# 4\n\nf(-1)\n# ValueError: expected x > 0", ("ValueError", 4)),
        ("f(-1)\n\n# ValueError: expected x > 0\nf(2)", ("ValueError", 4)),
    ],
)
def test_a_comment_on_a_statement_says_which_exception_it_raises(code, said):
    assert said_to_raise(code, parse(code)) == said


def test_prompts_mixed_into_a_script_are_found_and_code_shown_as_an_output_is_told_from_a_value():
    assert prompt_line("from shapes import area\n\n  >>> area(2)\n  4\n") == 3
    assert prompt_line("print('no prompts')\n") is None
    assert reads_as_code("shapes.draw()\n", "import shapes\n"), "an import shows no value"
    assert reads_as_code("shapes.draw()\nshapes.clear()\n", "shapes.make()\n")
    assert not reads_as_code("Point(x=1, y=2)\n", "shapes.make()\n"), "a value the expression gives"
    assert not reads_as_code("[1, 2, 3]\n", "values = []\n") and not reads_as_code("hello world\n", "x = 1\n")


def test_a_block_of_classes_whose_bodies_are_all_ellipses_is_a_sketch():
    assert is_sketch(parse("@shapes.decorate\nclass Square:\n    ...\n"))
    assert is_sketch(parse('@shapes.decorate\n@shapes.other\nclass Square:\n    """Doc."""\n    ...\n'))
    assert is_sketch(parse("from shapes import Shape\n\nclass Square(Shape):\n    ...\n")), "nothing registers it"
    assert not is_sketch(parse("class Square:\n    ...\n\nshapes.draw(Square())\n")), "it does something with it"
    assert not is_sketch(parse("class Square:\n    side: int\n")), "a body with fields is a definition"
    assert not is_sketch(parse("@app.route('/')\ndef home(): ...\n")), "a function stub is whole"
    assert not is_sketch(parse("import shapes\n"))


def test_an_empty_class_registered_by_a_decorator_the_block_imports_is_empty_by_design():
    registered = "from shapes import register\n\n@register(layer='top')\nclass Square: ...\n"
    assert not is_sketch(parse(registered)), "copied and run as it is, it registers the class"
    assert is_sketch(parse("@register(layer='top')\nclass Square: ...\n")), "its import left out: a shape"
    assert (
        elided_fields(parse("import shapes\n\n@shapes.record\nclass Tile:\n    ...\n\nshapes.save(Tile())\n")) is None
    )
    assert elided_fields(parse("import shapes\n\n@shapes.record\nclass Tile:\n    ...\n\nsave(Tile())\n")) == "Tile"


def test_the_fixtures_of_a_module_are_known_by_the_name_tests_ask_for_them_by():
    tree = parse(
        "import pytest\n\n@pytest.fixture(name='db')\ndef _db(tmp_path, request):\n    return 1\n\n"
        "@fixture\ndef user(db):\n    return db\n"
    )
    assert fixture_names(tree) == ["db", "user"]
    assert is_test_module(tree), "fixtures alone are a conftest's content"
    assert not is_test_module(parse("def test_it():\n    pass\n\nif __name__ == '__main__':\n    test_it()\n"))
    assert not is_test_module(parse("@queue.task\nasync def test():\n    pass\n")), "a task the page names `test`"


def test_the_sentence_after_a_block_can_say_it_fails():
    assert said_after_to_fail("This code does not work and shows this error:\n\n![error](error.svg)") == "Exception"
    assert said_after_to_fail("The test above raises `KeyError` until the key is set.") == "KeyError"
    assert said_after_to_fail("This works, and the test passes.") is None


def test_a_comment_in_a_test_can_say_the_test_fails_on_purpose():
    shown = "def test_user():\n    assert load() == {\n        'id': 1,\n        # no name here, so the test will fail\n    }\n"
    assert said_in_test_to_fail(shown) == "Exception"
    assert said_in_test_to_fail("def test_it():\n    check()  # this test fails with `KeyError`\n") == "KeyError"
    assert said_in_test_to_fail("def test_it():\n    check()  # the test will not fail once fixed\n") is None
    assert said_in_test_to_fail("def test_it():\n    # compare the two values\n    check()\n") is None


def test_the_variables_code_cannot_run_without_are_the_ones_it_reads_without_a_default():
    tree = parse(
        "import os\nfrom os import environ\nurl = os.environ['DB_URL']\nkey = environ['API_KEY']\n"
        "mode = os.environ.get('MODE', 'dev')\nhome = os.getenv('HOME_DIR')\nos.environ['SET_HERE'] = '1'\n"
    )
    assert required_variables(tree) == ["DB_URL", "API_KEY"]


def test_a_body_of_only_comments_is_found_where_it_alone_keeps_the_code_from_parsing():
    assert commented_body("class A(B):\n    # yours\n\nrun(A())\n") == 1
    assert commented_body("def f():\n    # yours\n") == 1
    assert commented_body("class A(B)\n    # yours\n") is None, "a missing colon is another syntax error"
    assert commented_body("class A(B):\n    pass\n") is None, "code that parses has no such body"
    assert commented_body("def f():  # yours\nrun()\n") == 1, "the comment on the header's own line"


def test_a_body_of_comments_is_the_readers_to_write_only_in_a_block_that_leaves_them_other_names_too():
    assert skeleton_body("class Square(Shape):\n    # yours\n\nshapes.draw(Square())\n") == 1
    assert skeleton_body("def on_error(job, error):\n    # log it\n") is None, "whole: pasted, IndentationError"
    assert skeleton_body("from shapes import Shape\n\ndef grow(shape: Shape):\n    # yours\n") is None


def test_a_header_with_no_comment_under_it_is_code_left_unindented_not_a_body_to_write():
    assert commented_body("def f():\nx = 1\nrun(x)\n") is None
    assert commented_body("def f():\n\nrun(f)\n") is None


def test_a_name_passed_alone_to_a_dotted_callee_is_placed_by_position_or_keyword():
    tree = parse("from books import pages\nhtml = pages.render(text, 2, style=style)\nshow(text.strip())\nmake()(text)")
    assert argument_places(tree, {"text", "style"}) == {
        "text": [("books.pages.render", 0)],
        "style": [("books.pages.render", "style")],
    }, "the callee is named from the module the code imports it from"


def test_the_first_use_of_each_name_is_given_in_the_order_a_reader_meets_them():
    tree = parse("def f():\n    return later(x)\n\nx = 1\nfirst(later)\n")
    assert first_uses(tree, {"first", "later", "absent"}) == {"later": 2, "first": 5}
    assert list(first_uses(tree, {"first", "later"})) == ["later", "first"]


def test_a_block_opening_on_a_lone_ellipsis_leaves_out_the_code_before_it():
    assert left_out_code(parse("...\n@record\nclass Tile:\n    side: int\n"))
    assert not left_out_code(parse("import shapes\n...\nshapes.draw()\n")), "what is shown before it stands"
    assert not left_out_code(parse("...\n"))
    assert not left_out_code(parse("class Tile:\n    ...\n\nshapes.draw(Tile())\n")), "a body, not a statement"


def test_field_declarations_alone_are_a_class_body_shown_without_its_class():
    assert class_body_excerpt(parse("side: int\ncolour: str = 'red'\n"), indented=False)
    assert class_body_excerpt(parse("side: int = 2\n"), indented=True)
    assert not class_body_excerpt(parse("side: int = 2\n"), indented=False), "a module's annotated variable"
    assert not class_body_excerpt(parse("side: int\nprint(side)\n"), indented=False)


def test_a_name_a_colon_and_a_value_are_settings_that_assign_nothing_not_a_class_body():
    settings = parse("SHAPES: {\n    'side': 2,\n}\nTIMEOUT: 30\n")
    assert settings_with_colons(settings) == ("SHAPES", 1)
    assert not class_body_excerpt(settings, indented=False)
    assert settings_with_colons(parse("side: int\ncolour: str = 'red'\n")) is None, "types: a class's fields"
    assert settings_with_colons(parse("SHAPES = {'side': 2}\n")) is None


def test_an_exit_is_as_written_when_a_module_level_raise_spells_out_its_status():
    assert exits_as_written(parse("import shapes\nraise shapes.Exit('Oh no', code=1)\n"), 2)
    assert exits_as_written(parse("raise SystemExit\n"), 1)
    assert not exits_as_written(parse("raise SystemExit(main())\n"), 1), "a status the program computes"
    assert not exits_as_written(parse("def stop():\n    raise SystemExit(1)\n\nstop()\n"), 2)


def test_a_method_spelt_like_a_special_method_with_its_underscores_wrong_is_found():
    def found(code):
        return misspelt_special_method(parse(code))

    assert found("class Cart:\n    x = 1\n\n    def __init(self, items):\n        self.items = items\n") == (
        "__init",
        "__init__",
        4,
    )
    assert found("class Cart:\n    def _repr_(self):\n        return 'cart'\n")[1] == "__repr__"
    assert found("class Cart:\n    def _get(self):\n        return 1\n") is None, "a private helper"
    assert (
        found("class Cart:\n    def __init__(self):\n        self.__init()\n\n    def __init(self):\n        pass\n")
        is None
    )
    assert found("class Cart:\n    def __init__(self):\n        pass\n") is None


def test_a_lone_function_with_an_ellipsis_body_is_a_signature_shown():
    assert signatures_only("def paint(canvas: Canvas, colour: Any) -> Stroke:\n    ...\n")
    assert signatures_only('async def paint(canvas):\n    """Doc."""\n    ...\n')
    assert not signatures_only("@brushes.register\ndef paint(canvas): ...\n"), "a decorator registers it"
    assert not signatures_only("def paint(canvas):\n    return canvas.fill()\n"), "a body that works"
    assert not signatures_only("def paint(canvas): ...\n\npaint(1)\n"), "the block calls it"


def test_the_names_at_a_line_are_those_of_its_statement_and_of_a_compound_statement_its_header_alone():
    tree = parse(
        "from tool import host, apt\n\nif host.fact(OS) == 'debian':\n    apt.packages(\n        names=[name],\n    )\n"
    )
    assert names_at(tree, 3) == {"host", "OS"}
    assert names_at(tree, 5) == {"apt", "name"}
    assert names_at(tree, 2) == set()


def test_a_reference_blocks_signatures_are_read_with_their_names_and_the_kinds_of_their_parameters():
    listed = listed_signatures("def paint(canvas, colour='red', *layers, glossy: bool = False, **extra) -> Stroke\n")
    assert [(s.name, s.is_method) for s in listed] == [("paint", False)]
    assert [(p.name, p.kind, p.has_default) for p in listed[0].parameters] == [
        ("canvas", "POSITIONAL_OR_KEYWORD", False),
        ("colour", "POSITIONAL_OR_KEYWORD", True),
        ("layers", "VAR_POSITIONAL", False),
        ("glossy", "KEYWORD_ONLY", True),
        ("extra", "VAR_KEYWORD", False),
    ]
    method = listed_signatures("    def on_draw(self, shape: Shape) -> None:\n        ...\n")
    assert [(s.name, s.is_method) for s in method] == [("on_draw", True)], "shown indented, with self"
    assert [s.name for s in listed_signatures("Square(side: float)\n")] == ["Square"], "a class, by its call"
    assert listed_signatures("def area(side):\n    return side * side\n") == [], "code, not a listing"


def test_strings_that_could_name_a_module_are_told_apart_by_whether_they_are_handed_to_a_call_or_looked_up():
    tree = parse('model = Model("gizmo.parts", key="wheels")\nsub = model["spokes"]\nsay("two words", "class")\n')
    assert string_names(tree, "handed") == ["gizmo.parts", "wheels"]
    assert string_names(tree, "looked_up") == ["spokes"], "a file or field name handed to a call is no lookup"
    files = parse('load("rates.table.csv")\nload("capital.resource.yaml")\nload("gizmo.parts")\n')
    assert string_names(files, "handed") == ["gizmo.parts"], "a dotted file name is a file's, by its suffix"


def test_code_that_makes_a_set_goes_through_its_members_in_no_fixed_order():
    assert builds_a_set(parse("for tile in {'corner', 'edge'}: print(tile)\n"))
    assert builds_a_set(parse("tiles = set(names)\n"))
    assert builds_a_set(parse("tiles = shapes.frozenset(names)\n"))
    assert builds_a_set(parse("tiles = {name.lower() for name in names}\n"))
    assert not builds_a_set(parse("tiles = {'corner': 1}\nprint(f'{tiles}')\n")), "a dict and an f-string keep order"


@pytest.mark.parametrize(
    ("code", "literal"),
    [
        ('{"short": 1, "long": [2, 3]}', True),
        ("(1, 'a')", True),
        ("{'short': count}", False),
        ("{[1]: 2}", False),
        ("'just a string'", False),
        ("counts = {'short': 1}", False),
    ],
)
def test_one_displayed_container_of_plain_values_is_a_literal_value(code, literal):
    assert is_literal_value(parse(code)) is literal


def test_a_comment_on_a_statement_that_parses_as_a_literal_is_the_value_the_page_says_it_has():
    code = (
        "url = env('URL')  # => 'https://a'\n"
        "env.dump()\n"
        "# {'A': 1,\n"
        "#  'B': [2]}\n"
        "load(x)  # Person(1)\n"
        "size = 3  # the count\n"
        "print(x)  # 4\n"
        "def f():\n"
        "    return g()  # 5\n"
    )
    said = value_comments(code, parse(code))
    assert [(c.line, c.value) for c in said] == [(1, "https://a"), (2, {"A": 1, "B": [2]})]


def test_an_exception_message_in_the_comments_at_its_statement_is_shown_by_the_page():
    code = "check('TTL')\n# => Environment variable \"TTL\" invalid:\n#    ['Invalid value.']\nother()\n"
    tree = parse(code)
    assert comment_shows_message(code, tree, 1, "Environment variable \"TTL\" invalid: ['Invalid value.']")
    assert not comment_shows_message(code, tree, 4, "Environment variable \"TTL\" invalid: ['Invalid value.']")
    assert not comment_shows_message(code, tree, 1, "Something else went wrong here")


def test_a_name_a_block_reads_before_it_rebinds_it_comes_from_the_earlier_block_that_made_it():
    trees = [
        parse("from shapes import log\n"),
        parse("import sys\nlog = log.bind(sys.stderr)\n"),
        parse("log.info('hi')\n"),
    ]
    assert dependencies(1, trees) == [0]
    assert dependencies(2, trees) == [0, 1]
    assert dependencies(1, [parse("log = 1\n"), parse("log = 2\nlog.bit_length()\n")]) == [], "bound before read"


def test_a_prompt_typed_without_its_space_is_a_prompt():
    session = ">>> a = 1\n>>>a\n1\n"
    assert prompts_spaced(session) == ">>> a = 1\n>>> a\n1\n"
    assert session_statements(prompts_spaced(session)) == 2


def test_names_read_inside_functions_and_lambdas_are_those_they_look_up_when_they_run():
    tree = parse("import os\nlog = patch(lambda r: datetime.now())\ndef f():\n    return sys.path\nx = os.sep\n")
    assert used_in_functions(tree) == {"datetime", "sys"}


def test_lines_a_session_leaves_without_the_continuation_prompt_or_types_with_the_first_one_go_on_its_statement():
    unprompted = ">>> dumps(\n    {'a': 1},\n    indent=2\n)\n'{}'\n>>> x = 1\n"
    assert continuations_prompted(unprompted) == (
        ">>> dumps(\n...     {'a': 1},\n...     indent=2\n... )\n'{}'\n>>> x = 1\n"
    )
    body_at_first_prompt = ">>> def foo():\n>>>   i = 3\n>>>   show(i)\n>>> foo()\n3\n"
    assert continuations_prompted(body_at_first_prompt) == (
        ">>> def foo():\n...   i = 3\n...   show(i)\n>>> foo()\n3\n"
    )
    finished = ">>> for x in [1]:\n...     print(x)\n1\n>>> print(2)\n2\n"
    assert continuations_prompted(finished) == finished, "output after a finished statement stays"


def test_definitions_pasted_without_prompts_after_a_statement_that_shows_nothing_are_typed_too():
    pasted = (
        ">>> import shapes\n>>>\n@shapes.frozen\nclass Dot:\n    x: int\n\n    y: int\n>>> Dot(1, 2)\nDot(x=1, y=2)\n"
    )
    assert definitions_prompted(pasted) == (
        ">>> import shapes\n>>>\n>>> @shapes.frozen\n... class Dot:\n...     x: int\n...\n...     y: int\n"
        ">>> Dot(1, 2)\nDot(x=1, y=2)\n"
    )
    after_a_value = ">>> shapes.make()\nx = 1\n>>> x\n1\n"
    assert definitions_prompted(after_a_value) == after_a_value, "what a call shows may read as code"
    printing = ">>> import shapes\nprint(shapes.VERSION)\n"
    assert definitions_prompted(printing) == printing, "a call among the prompts is no definition"


def test_a_blank_line_inside_a_shown_output_stays_in_it_and_one_before_a_prompt_ends_it():
    _, session = session_parts(">>> print(art)\n\n .--.\n| x |\n\n>>> done = True\n\n")
    assert session.split("\n")[:5] == [">>> print(art)", "<BLANKLINE>", " .--.", "| x |", ""]
    assert session.endswith(">>> done = True\n\n")


def test_values_shown_at_prompts_go_on_past_code_a_lone_ellipsis_leaves_out_but_not_past_a_prompts_continuation():
    elided = "items = [1]\n\n... # as above\n\nlen(items)\n>>> 1  # one\n"
    assert python_code.values_shown_at_prompts(elided) == "items = [1]\n\n... # as above\n\nlen(items)\n# => 1  # one\n"
    assert python_code.values_shown_at_prompts("x = 1\n>>> [x,\n... 2]\n") is None


def test_a_comment_saying_its_line_does_not_work_says_it_fails():
    code = "box.add(1)  # fine\nbox.add('x')  # does not work!\n"
    assert python_code.said_to_raise(code, python_code.parse(code)) == ("Exception", 2)
    works = "box.add(1)  # this works\n"
    assert python_code.said_to_raise(works, python_code.parse(works)) is None


def test_a_template_slot_beside_elided_parameters_is_pseudo_code():
    assert python_code.ellipsis_syntax_gap("@decorate(<arguments>)\ndef impl(...):\n    ...\n") == 2
    assert python_code.ellipsis_syntax_gap("@decorate(<arguments>)\ndef impl(...):\n    return (\n") is None


def test_a_sentence_that_throws_in_something_extra_says_nothing_of_failing():
    tree = python_code.parse("machine = Machine()\n")
    assert python_code.introduced_as_failing("You can throw in some extra features by decorating states:", tree) is None
    assert python_code.introduced_as_failing("Passing a string throws a `TypeError`:", tree) == "TypeError"


def test_a_longer_run_of_dots_on_its_own_line_is_code_left_out():
    assert python_code.ellipsis_syntax_gap("import json\n\n.......\n\nprint(json.dumps([]))\n") == 3


def test_a_name_only_reached_two_attributes_deep_is_told_from_one_used_directly_or_one_deep():
    tree = python_code.parse("db.model.get_id()\nsizes.count(1)\nshape.area.value\nprint(shape)\n")
    assert python_code.reached_deep_only(tree) == {"db"}
