from stackbench.docs import python_code
from stackbench.formats.walkthrough import CodeExample
from stackbench.validation.examples import calls_print, names_in, runnable, source_of, style_of


def example(code, **fields):
    return CodeExample(library="sbdemo", code=code, line=1, **fields)


def test_the_extractors_style_wins_and_the_code_decides_for_files_of_the_existing_tools():
    assert style_of(example("print(1)", style="doctest")) == "doctest"
    assert style_of(example(">>> 1 + 1\n2\n")) == "doctest"
    assert style_of(example("x = 1\n")) == "script"


def test_a_session_runs_what_is_typed_at_its_prompts():
    assert source_of(example(">>> x = 1\n>>> x\n1\n")) == "x = 1\nx\n"
    assert source_of(example("x = 1\n")) == "x = 1\n"


def test_only_examples_marked_not_executable_are_not_run():
    assert runnable(example("x = 1"))
    assert not runnable(example("x = 1", execution_context="not_executable"))


def test_the_names_an_example_defines_are_read_even_from_a_session():
    assert names_in(example(">>> total = 3\n")) == {"total"}


def test_an_example_prints_only_through_a_call_to_print():
    assert calls_print(python_code.parse("print('x')\n"))
    assert not calls_print(python_code.parse("x.print = 1\n")) and not calls_print(None)


def test_a_testsetup_sets_up_the_blocks_of_its_groups_wherever_it_stands_and_other_blocks_below_it():
    from stackbench.formats.walkthrough import SetupCode
    from stackbench.validation.examples import sets_up

    grouped = SetupCode(code="x = 1", line=50, groups=["shapes"])
    assert sets_up(grouped, example(">>> x", style="doctest", doctest_groups=["shapes"]))
    assert not sets_up(grouped, example(">>> x", style="doctest", doctest_groups=["default"]))
    assert sets_up(SetupCode(code="x = 1", line=50, groups=["*"]), example(">>> x", doctest_groups=["default"]))
    assert sets_up(grouped, example(">>> x", doctest_groups=["*"])), "a block of every group"
    assert not sets_up(grouped, example(">>> x")), "a plain block above it is not set up yet"
    assert sets_up(SetupCode(code="x = 1", line=0), example(">>> x", doctest_groups=["shapes"]))
