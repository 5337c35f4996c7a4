import pytest

from stackbench.lib.output_compare import (
    compare,
    differing_line,
    form_shown,
    missing_lines,
    same_lines_in_another_order,
)


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("hello\n", "hello\n"),
        ("a   b\n\n", "a b"),
        ("<Thing object at ...>", "<Thing object at 0x7f00aa>"),
        ("{\n    'a': 1,\n    'b': [1, 2],\n}", "{'a': 1, 'b': [1, 2]}"),
        ("see https://errors.example.dev/2/v/missing", "see https://errors.example.dev/2.14/v/missing"),
        ("\x1b[1mbold\x1b[0m text", "bold text"),
        ("[1mbold[0m text", "bold [36mtext"),
        ("# nothing is printed", ""),
        ("# the sum is:\n3", "3"),
        ("3\n# and nothing more", "3"),
        ("# Title\ntext", "# Title\ntext"),
        ("True\nFalse  # Hmm?", "True\nFalse"),
        ("x  # kept", "x  # kept"),
    ],
)
def test_what_doctest_accepts_and_layout_alone_are_the_same(expected, actual):
    assert compare(expected, actual) == "same"


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("2021-11-15 11:41:47 [info] woo", "2026-01-02 03:04:05 [info] woo"),
        ("<class 'Point'>", "<class '__main__.Point'>"),
        ("list[__test__.Point]", "list[__main__.Point]"),
        ('Shape(kind=float, tags={"round"})', "Shape(kind=<class 'float'>, tags={'round'})"),
        ("id=1b4e28ba-2fa1-11d2-883f-0016d3cca427", "id=6fa459ea-ee8a-3ca4-894e-db77e160355e"),
        ("events=oh yes", "events='oh yes'"),
        ('{"event": "hi", "timestamp": 1700000000.123}', '{"event": "hi", "timestamp": 1800000000.5}'),
        ("<Foo object at 0x7f..>", "<Foo object at 0x7e9a3c5d1f20>"),
        ("<coroutine object main at 0x7f>", "<coroutine object main at 0x7e9a3c5d1f20>"),
        ("Mon Jan  1 10:00:00 2024", "Tue Mar  4 11:22:33 2026"),
        ("wrote /tmp/tmpab12cd/out.txt", "wrote /tmp/tmpzz99yy/out.txt"),
        ("job 5f1c2d3e4b5a6978 done", "job 0a9b8c7d6e5f4a3b done"),
        ("SELECT `q7`.`n` FROM VALUES (1) AS `q7`(`n`)", "SELECT `q1`.`n` FROM VALUES (1) AS `q1`(`n`)"),
        (
            'Traceback (most recent call last):\n  File "/Users/author/proj/app.py", line 41, in <module>\n'
            "    run()\nValueError: no",
            'Traceback (most recent call last):\n  File "/home/reader/app.py", line 7, in <module>\n'
            "    run()\nValueError: no",
        ),
        (
            'log: start\nTraceback (most recent call last):\n  File "/a/app.py", line 4, in <module>\n    go()\n'
            "ValueError: no\nlog: end",
            'log: start\nTraceback (most recent call last):\n  File "/b/app.py", line 9, in <module>\n    main()\n'
            '  File "/b/lib.py", line 2, in go\n    raise ValueError("no")\nValueError: no\nlog: end',
        ),
        (
            'lib: registered\nStack (most recent call last):\n  File "/a/app.py", line 4, in <module>\n    go()\n',
            'lib: registered\nStack (most recent call last):\n  File "/b/app.py", line 9, in <module>\n    main()\n',
        ),
    ],
)
def test_values_that_change_from_run_to_run_differ_only_in_format(expected, actual):
    assert compare(expected, actual) == "format"


@pytest.mark.parametrize(
    "expected, actual",
    [
        ("[1, 2]", "(1, 2)"),
        ("hello", ""),
        ('{"event": "hello"}', '{"event": "hello", "lineno": 1}'),
        ("<class 'Point'>", "<Point object at 0x7f00aa>"),
        ("Shape(kind=float)", "Shape(kind=<class 'int'>)"),
        ("20! = 2432902008176640000", "20! = 2432902008176640001"),
        ("<h1>Title</h1>", "<h2>Title</h2>"),
        ("API v2", "API v3"),
        (
            'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nValueError: no',
            'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nKeyError: no',
        ),
    ],
)
def test_a_different_value_is_different(expected, actual):
    assert compare(expected, actual) == "different"


def test_the_first_differing_line_is_shown_to_the_reader():
    assert differing_line("a\nb\nc\n", "a\nx\nc\n") == ("b", "x")
    assert differing_line("# prints:\nb\n", "x\n") == ("b", "x")
    assert differing_line("a\n", "a\nextra\n") == ("(nothing)", "extra")


def test_the_same_lines_in_another_order_are_told_apart_from_other_lines():
    assert same_lines_in_another_order("pear\napple\n", "apple\npear\n")
    assert same_lines_in_another_order("  pear\n\napple", "apple\npear\n"), "layout aside"
    assert not same_lines_in_another_order("pear\napple\n", "apple\nplum\n")
    assert not same_lines_in_another_order("pear\npear\napple\n", "apple\npear\napple\n"), "each as often"
    assert not same_lines_in_another_order("", "")


def test_one_value_shown_laid_out_with_other_quotes_and_order_is_the_same_and_a_missing_key_is_not():
    printed = "{'ratio': 1, 'zip|min_length': 1}\n"
    assert compare('{\n    "zip|min_length": 1,\n    "ratio": 1,\n}\n', printed) == "same"
    assert compare('{\n    "ratio": 1,\n    "minimum": 2,\n    "zip|min_length": 1,\n}\n', printed) == "different"


def test_a_place_in_source_differs_only_in_format():
    shown = "<function mul at ...> @ ...md:26\n"
    assert compare(shown, "<function mul at 0x7fbf8315bba0> @ /example_0_line_11.py:16\n") == "format"
    assert compare(shown, "<function add at 0x7fbf8315bba0> @ /example_0_line_11.py:16\n") == "different"


def test_the_place_of_code_typed_at_a_prompt_is_a_place_in_the_readers_file():
    shown = "ic| /absolute/path/to/example.py:12 in foo()- i: 3\n"
    assert compare(shown, "ic| /home/reader/work/<doctest README.md:352[3]>:2 in foo()- i: 3\n") == "format"
    assert compare("ic| example.py:12 in foo()- i: 3\n", "ic| <stdin>:4 in foo()- i: 3\n") == "format"
    assert compare(shown, "ic| <doctest README.md:352[3]>:2 in bar()- i: 3\n") == "different"


def test_a_log_records_origin_differs_only_in_format_by_its_line_but_not_by_its_function():
    shown = "12:00:00 | ERROR | __main__:nested:10 - What?!\n"
    assert compare(shown, "12:00:01 | ERROR | __main__:nested:11 - What?!\n") == "format"
    assert compare(shown, "12:00:01 | ERROR | __main__:<module>:11 - What?!\n") == "different"


def test_a_tags_attributes_in_another_order_differ_only_in_format_and_another_value_differs():
    shown = '<circle stroke="2" fill="red"/>\n'
    assert compare(shown, '<circle fill="red" stroke="2"/>\n') == "format"
    assert compare(shown, '<circle fill="blue" stroke="2"/>\n') == "different"


def test_a_rate_measured_while_it_ran_differs_only_in_format_and_a_count_still_differs():
    shown = "|████| 1000/1000 [100%] in 5.8s (171.62/s)"
    assert compare(shown, "|████| 1000/1000 [100%] in 5.2s (193.64/s)") == "format"
    assert compare(shown, "|████| 1000/1500 [67%] in 5.2s (193.64/s)") == "different"


def test_an_address_the_page_leaves_out_of_a_repr_differs_only_in_format():
    assert compare("<Player 0x7fe4\n  .position = <Position", "<Player 0x7f5b\n  .position = <Position 0x7f5c") == (
        "format"
    )
    assert compare("<Player\n  .name = 'Alice'", "<Player 0x7f5b\n  .name = 'Bob'") == "different"


def test_where_a_modules_repr_says_it_was_loaded_from_differs_only_in_format():
    shown = "<module 'shapes.circle' from '/Users/someone/src/shapes/circle.py'>"
    assert compare(shown, "<module 'shapes.circle' from '/venv/lib/python3.11/site-packages/shapes/circle.py'>") == (
        "format"
    )
    assert compare(shown, "<module 'shapes.square' from '/venv/shapes/square.py'>") == "different"


def test_a_varying_value_is_in_the_runs_form_whatever_its_numbers_and_not_when_a_part_is_missing():
    runs = [
        "datetime.datetime(2026, 12, 7, 21, 41, 53, 638370, tzinfo=datetime.timezone.utc)",
        "datetime.datetime(2026, 12, 7, 21, 41, 54, 12, tzinfo=datetime.timezone.utc)",
    ]
    assert form_shown("datetime.datetime(2024, 7, 4, 10, 36, 56, tzinfo=datetime.timezone.utc)", runs)
    assert not form_shown("datetime.datetime(2017, 6, 30, 8, 51, 22)", runs), "the runs' time zone is missing"
    assert form_shown("<ULID('01BJQMF54D093DXEAWZ6JYRPAQ')>", ["<ULID('01K9X3')>", "<ULID('01K9X4')>"])


def test_a_panel_drawn_at_another_width_shows_the_same_lines_and_a_changed_word_does_not():
    shown = "╭─ Options ──────────────╮\n│ --help  Show this message and exit. │\n╰────────────────────────╯\n"
    printed = (
        "╭─ Options ─────────────────────────────────────────╮\n"
        "│ --help          Show this message and exit.        │\n"
        "╰───────────────────────────────────────────────────╯\n"
    )
    assert missing_lines(shown, printed) == []
    assert missing_lines(shown, printed.replace("exit", "quit")) == ["│ --help  Show this message and exit. │"]
