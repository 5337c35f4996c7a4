"""The page runner on its own (outside a sandbox): one JSON request per line in, one answer per line out."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stackbench.validation import page_runner

RUNNER = Path(page_runner.__file__)


@pytest.fixture
def runner(tmp_path):
    process = subprocess.Popen(
        [sys.executable, str(RUNNER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path, text=True
    )

    def ask(request):
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())

    start = {
        "cwd": str(tmp_path),
        "library_modules": ["json"],
        "page_packages": ["os", "collections"],
        "preload": ["json"],
    }
    assert ask(start) == {"status": "ready"}
    ask.state = str(tmp_path)
    yield ask
    process.stdin.close()
    process.wait(timeout=10)


def test_sessions_share_names_and_what_code_printed_through_an_old_handle_reaches_the_session(runner):
    first = runner(
        {
            "op": "session",
            "name": "p.md:1",
            "text": ">>> import logging, sys\n>>> logging.basicConfig(stream=sys.stdout, format='%(message)s')\n",
        }
    )
    assert first["failures"] == [] and first["ran"] == 2
    second = runner(
        {
            "op": "session",
            "name": "p.md:9",
            "line": 8,
            "text": ">>> logging.getLogger().warning('seen')\nseen\n>>> print('x')\ny\n",
        }
    )
    assert second["ran"] == 2 and [f["line"] for f in second["failures"]] == [10]
    assert second["failures"][0]["want"] == "y\n" and second["failures"][0]["got"] == "x\n"


def test_log_lines_on_standard_error_are_read_past_unless_the_session_shows_them(runner):
    text = (
        ">>> import logging, sys\n"
        ">>> def work():\n"
        "...     logging.getLogger('demo').warning('careful')\n"
        "...     print('done')\n"
        ">>> work()\n"
        "done\n"
        ">>> handler = logging.StreamHandler(sys.stderr)\n"
        ">>> logging.getLogger('shown').addHandler(handler)\n"
        ">>> logging.getLogger('shown').warning('shown too')\n"
        "shown too\n"
        ">>> work()\n"
        "finished\n"
    )
    answer = runner({"op": "session", "name": "p.md:1", "text": text})
    assert answer["ran"] == 7 and [f["line"] for f in answer["failures"]] == [10]
    [wrong] = answer["failures"]
    assert wrong["got"] == "careful\ndone\n" and wrong["stdout"] == "done\n"


def test_a_script_runs_in_a_fork_so_its_changes_to_the_process_stay_there(runner):
    changed = runner(
        {
            "op": "script",
            "name": "a.py",
            "state": runner.state,
            "code": "import os\nos.environ['LEAK'] = '1'\nprint('done')\n",
        }
    )
    assert changed["status"] == "ok" and changed["output"] == "done\n"
    after = runner(
        {"op": "script", "name": "b.py", "state": runner.state, "code": "import os\nprint(os.environ.get('LEAK'))\n"}
    )
    assert after["output"] == "None\n"


LAZY_SETTINGS = """class Unconfigured:
    def __getattribute__(self, name):
        raise RuntimeError("settings are not configured")


settings = Unconfigured()
raise ValueError("the example's own error")
"""

UNREADABLE_EXCEPTION = """class Guarded(type):
    def __getattribute__(cls, name):
        if name == "__mro__":
            raise RuntimeError("no mro here")
        return super().__getattribute__(name)


class Odd(Exception, metaclass=Guarded):
    pass


raise Odd()
"""


def test_a_script_binding_an_object_that_refuses_every_attribute_still_gets_its_own_exception_reported(runner):
    answer = runner({"op": "script", "name": "lazy.py", "state": runner.state, "code": LAZY_SETTINGS})
    assert answer["status"] == "exception" and answer["exception"]["type"] == "ValueError"
    after = runner({"op": "script", "name": "after.py", "state": runner.state, "code": "print('after')\n"})
    assert (after["status"], after["output"]) == ("ok", "after\n")


def test_a_fault_of_the_runners_own_inside_a_script_fork_is_answered_once_and_the_runner_goes_on(runner):
    odd = {"op": "script", "name": "odd.py", "state": runner.state, "code": UNREADABLE_EXCEPTION, "timeout": 1}
    answer = runner(odd)
    assert answer["status"] == "internal" and "no mro here" in answer["message"]
    time.sleep(2)  # past the fork's time limit: a runner still waiting for it would answer again by now
    for word in ("after", "later"):
        after = runner({"op": "script", "name": f"{word}.py", "state": runner.state, "code": f"print('{word}')\n"})
        assert (after["status"], after["output"]) == ("ok", f"{word}\n"), "one answer per request, from one runner"


def test_each_print_is_recorded_with_its_line(runner):
    answer = runner(
        {
            "op": "script",
            "name": "c.py",
            "state": runner.state,
            "record_prints": True,
            "code": "for n in range(2):\n    print(n)\nprint('end', sep='-')\n",
        }
    )
    assert answer["prints"] == [[2, "0\n"], [2, "1\n"], [3, "end\n"]]


def test_the_value_of_each_statement_the_page_comments_on_is_recorded_once_it_is_made(runner):
    answer = runner(
        {
            "op": "script",
            "name": "d.py",
            "state": runner.state,
            "values": [2, 3],
            "code": "import json\nsettings = {'a': 1}\njson.dumps(settings)\nprint('after')\n",
        }
    )
    assert answer["status"] == "ok" and answer["output"] == "after\n"
    # Each value by its place among the lines asked for, which a repaired copy with imports added above shares.
    assert answer["values"] == [[0, "{'a': 1}"], [1, "'{\"a\": 1}'"]]


def test_a_failure_says_where_and_what_could_provide_a_missing_name(runner):
    answer = runner({"op": "script", "name": "d.py", "state": runner.state, "code": "x = 1\ndumps({})\n"})
    exc = answer["exception"]
    assert exc["type"] == "NameError" and exc["name"] == "dumps" and exc["provided_by"] == ["json"]
    assert exc["frames"][-1] == {
        "filename": "d.py",
        "lineno": 2,
        "name": "<module>",
        "where": "example",
        "line": "dumps({})",
    }


def test_a_failure_names_the_exceptions_behind_it_nearest_first(runner):
    code = "try:\n    {}['url']\nexcept KeyError as exc:\n    raise RuntimeError('load failed') from exc\n"
    exc = runner({"op": "script", "name": "e.py", "state": runner.state, "code": code})["exception"]
    assert exc["type"] == "RuntimeError"
    assert [(c["type"], c["message"], c["mro"][0]) for c in exc["causes"]] == [
        ("KeyError", "'url'", "builtins.KeyError")
    ]


def test_a_group_holding_one_exception_is_read_as_that_exception_and_a_group_of_several_as_the_group(runner):
    def raised(code):
        return runner({"op": "script", "name": "g.py", "state": runner.state, "code": code})["exception"]

    sole = raised(
        "def body():\n    fetch_user(1)\n\ntry:\n    body()\nexcept NameError as exc:\n"
        "    raise ExceptionGroup('task group', [ExceptionGroup('inner', [exc])])\n"
    )
    assert (sole["type"], sole["name"], sole["group"]) == ("NameError", "fetch_user", "ExceptionGroup")
    assert [f["lineno"] for f in sole["frames"] if f["where"] == "example"] == [7, 5, 2], "where it began, then rose"
    several = raised("raise ExceptionGroup('task group', [ValueError(1), KeyError(2)])\n")
    assert several["type"] == "ExceptionGroup" and "group" not in several
    own = raised("class FieldsInvalid(ExceptionGroup):\n    pass\n\nraise FieldsInvalid('bad', [ValueError(1)])\n")
    assert own["type"] == "FieldsInvalid", "a library's own kind of group means itself"


def test_a_name_the_library_lacks_is_looked_for_among_the_top_level_exports_of_the_pages_other_packages(runner):
    names = runner({"op": "resolve", "names": ["dumps", "getcwd", "OrderedDict", "path", "nowhere"]})["names"]
    offered = {name: found["provided_by"] for name, found in names.items()}
    assert offered["dumps"] == ["json"], "the library first"
    assert (offered["getcwd"], offered["OrderedDict"]) == (["os"], ["collections"])
    assert offered["path"] == [], "os.path is a submodule of os, not a name it exports"
    assert offered["nowhere"] == []


def test_a_name_of_the_typing_module_is_offered_from_there_after_the_library_and_the_pages_packages(runner):
    names = runner({"op": "resolve", "names": ["NewType", "Optional", "OrderedDict", "abstractmethod"]})["names"]
    offered = {name: found["provided_by"] for name, found in names.items()}
    assert (offered["NewType"], offered["Optional"]) == (["typing"], ["typing"])
    assert offered["OrderedDict"] == ["collections"], "a package of the page's comes first"
    assert offered["abstractmethod"] == ["abc"], "its own module: typing uses it but does not export it"


def test_a_value_that_changes_from_one_evaluation_to_the_next_is_told_from_one_that_moves_on_or_is_wrong(runner):
    text = (
        ">>> import random, uuid\n>>> uuid.uuid4().hex\n'0'\n>>> random.random()\n0.5\n"
        ">>> numbers = iter(range(5))\n>>> next(numbers)\n3\n>>> 1 + 1\n3\n"
        ">>> print(random.random() * 2)\n0.5\n>>> print('a'); print('b')\nc\n"
        ">>> drawn = random.random()\n>>> print('drawn', drawn)\ndrawn 0.5\n"
    )
    failures = runner({"op": "session", "name": "p.md:1", "text": text})["failures"]
    varies = [bool(failure.get("shown_again")) for failure in failures]
    assert varies == [True, True, False, False, True, False, True], "the last as the statement before it drew it"


def test_time_is_up_for_a_stuck_session_and_the_runner_goes_on(runner):
    stuck = runner({"op": "session", "name": "p.md:1", "timeout": 0.5, "text": ">>> while True: pass\n"})
    assert stuck["status"] == "timeout"
    assert runner({"op": "session", "name": "p.md:5", "text": ">>> 1 + 1\n2\n"})["failures"] == []


def test_hidden_setup_and_exported_variables_apply_from_where_they_are_given(runner):
    assert runner({"op": "setup", "name": "conf.py", "code": "answer = 42\n"})["status"] == "ok"
    assert runner({"op": "environ", "variables": {"SB_MODE": "fast"}})["status"] == "ok"
    answer = runner(
        {"op": "session", "name": "p.md:1", "text": ">>> import os\n>>> answer, os.environ['SB_MODE']\n(42, 'fast')\n"}
    )
    assert answer["failures"] == []


def test_the_environment_names_the_oldest_python_the_library_supports(runner):
    assert runner({"op": "environment", "library": "packaging"})["requires_python"].startswith(">=3.")
    assert runner({"op": "environment", "library": "no-such-library"})["requires_python"] == ""


def test_a_listed_signatures_definitions_are_found_in_the_librarys_modules_and_submodules_with_their_parameters(
    runner,
):
    definitions = runner(
        {
            "op": "signatures",
            "names": {"dumps": False, "JSONDecodeError": False, "decode": True, "raw_decode": False, "nowhere": False},
        }
    )["definitions"]
    dumps = definitions["dumps"][0]
    assert dumps["where"] == "json.dumps"
    assert dumps["parameters"][:2] == [["obj", "POSITIONAL_OR_KEYWORD", False], ["skipkeys", "KEYWORD_ONLY", True]]
    assert definitions["JSONDecodeError"][0]["parameters"][0][0] == "msg", "a class by its constructor"
    assert "json.decoder.JSONDecoder.decode" in [d["where"] for d in definitions["decode"]], "a method on a class"
    assert "json.decoder.JSONDecoder.raw_decode" in [d["where"] for d in definitions["raw_decode"]], (
        "a method the page lists as called on an instance, without `self`"
    )
    assert definitions["nowhere"] == []


def test_a_session_awaits_at_its_top_level_as_in_the_readers_async_repl_in_one_loop_for_the_page(runner):
    first = runner(
        {
            "op": "session",
            "name": "p.md:1",
            "text": ">>> import asyncio\n>>> queue = asyncio.Queue()\n>>> await queue.put(7)\n"
            ">>> async def current():\n...     return asyncio.get_running_loop()\n>>> loop = await current()\n"
            ">>> await asyncio.sleep(0, 'slept')\n'slept'\n",
        }
    )
    assert first["failures"] == [] and first["ran"] == 6
    second = runner(
        {
            "op": "session",
            "name": "p.md:9",
            "text": ">>> await queue.get()\n7\n>>> (await current()) is loop\nTrue\n>>> 1 +\n",
        }
    )
    assert [f["line"] for f in second["failures"]] == [4], "the page's one loop; an error is still an error"


def test_a_library_that_keeps_the_standard_streams_at_import_writes_where_the_pages_output_goes(tmp_path):
    (tmp_path / "keeper.py").write_text(
        "import sys\nstream = sys.stderr\n\ndef log(text):\n    stream.write(text + '\\n')\n"
    )
    process = subprocess.Popen(
        [sys.executable, str(RUNNER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path, text=True
    )
    process.stdin.write(json.dumps({"cwd": str(tmp_path), "preload": ["keeper"]}) + "\n")
    earlier = {"name": "a.py", "code": "import keeper\nkeeper.log('earlier')\n"}
    request = {
        "op": "script",
        "name": "b.py",
        "state": str(tmp_path),
        "preludes": [earlier],
        "code": "keeper.log('now')\n",
    }
    process.stdin.write(json.dumps(request) + "\n")
    process.stdin.close()
    answers = [json.loads(line) for line in process.stdout]
    process.wait(timeout=10)
    assert answers[0] == {"status": "ready"}
    assert answers[1]["output"] == "now\n", "the earlier script runs quietly, its handle to stderr included"


def test_a_stack_the_example_prints_holds_its_own_frames_not_the_runners(runner):
    code = "import traceback\n\ndef shown():\n    traceback.print_stack()\n\nshown()\n"
    answer = runner({"op": "script", "name": "a.py", "state": runner.state, "code": code})
    assert "page_runner" not in answer["output"]
    assert answer["output"].startswith('  File "a.py", line 6, in <module>\n    shown()\n')


def test_a_modules_name_reached_for_what_only_its_member_of_that_name_has_means_that_member(runner):
    unbound = runner({"op": "script", "name": "a.py", "state": runner.state, "code": "print(datetime.utcnow())\n"})
    assert unbound["exception"]["member_import"] is True
    module = runner(
        {"op": "script", "name": "b.py", "state": runner.state, "code": "import datetime\ndatetime.utcnow()\n"}
    )
    assert module["exception"]["member_has"] is True
    resolved = runner(
        {"op": "resolve", "names": ["datetime", "json"], "attributes": {"datetime": ["utcnow"], "json": ["dumps"]}}
    )
    assert (
        resolved["names"]["datetime"]["member_import"] is True and resolved["names"]["json"]["member_import"] is False
    )


def test_a_script_importing_the_module_whose_member_a_session_imported_leaves_the_sessions_name_alone(runner):
    runner({"op": "session", "name": "p.md:1", "text": ">>> from pprint import pprint\n"})
    assert runner({"op": "materialize", "name": "a.py", "code": "import pprint\nimport json\n"})["status"] == "ok"
    after = runner({"op": "session", "name": "p.md:9", "text": ">>> pprint([1])\n[1]\n>>> json.dumps(1)\n'1'\n"})
    assert after["failures"] == [] and after["ran"] == 2


def test_a_stack_laid_out_with_blank_lines_between_frames_keeps_its_layout_without_the_runners_frames():
    runner_file = page_runner.__file__
    printed = (
        "Traceback (most recent call last):\n\n"
        f'  File "{runner_file}", line 9, in main\n    handle()\n    └ <function handle>\n\n'
        f'  File "{runner_file}", line 20, in handle\n    run(code)\n\n'
        '> File "a.py", line 3, in <module>\n    f()\n\nValueError: boom\n'
    )
    assert page_runner._without_runner_frames(printed) == (
        'Traceback (most recent call last):\n\n> File "a.py", line 3, in <module>\n    f()\n\nValueError: boom\n'
    )


def test_an_exception_carries_the_other_names_the_pages_modules_give_its_class(runner):
    text = ">>> import socket\n>>> raise TimeoutError('late')\nsocket.timeout: late\n"
    answer = runner({"op": "session", "name": "p.md:1", "text": text})
    exception = answer["failures"][0]["exception"]
    assert exception["type"] == "TimeoutError" and "timeout" in exception["aliases"]
    plain = runner({"op": "session", "name": "p.md:5", "text": ">>> raise KeyError('k')\n"})
    assert plain["failures"][0]["exception"]["aliases"] == []
