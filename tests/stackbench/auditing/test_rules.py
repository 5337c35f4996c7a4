import json
import time

import pytest

from stackbench.auditing.common import AuditObserver
from stackbench.auditing.rules import AuditCancelled
from stackbench.auditing.run import run_audit
from stackbench_site.configuration import sandbox_settings
from tests.builders import audit_request, sandbox_processes, wait_for


def _expected(sample_dir):
    return json.loads((sample_dir / "walkthroughs" / "wt_kv_quickstart.expected.json").read_text())


def test_the_kv_quickstart_gets_exactly_the_expected_gaps(kv_walkthrough_path, sample_dir, tmp_path):
    result = run_audit(audit_request(kv_walkthrough_path, tmp_path, "sqlite3", "3.40"))
    expected = _expected(sample_dir)
    for step, gap_types in expected["gaps_expected"].items():
        found = {g.gap_type for g in result.gaps if g.step_number == int(step)}
        assert set(gap_types) <= found, f"step {step}: {found}"
    for step in expected["clean_steps"]:
        assert not [g for g in result.gaps if g.step_number == step and g.severity in ("critical", "warning")]
    # Step 3 reads a file no step made: followed, but not completed.
    assert (result.total_steps, result.completed_steps, result.failed_steps, result.success) == (5, 4, 1, False)
    records = json.loads(result.execution_log)
    assert [r["status"] for r in records] == ["done", "done", "partly done", "done", "done"]
    assert records[2]["not_done"][0].endswith("failed (exit 1)")


def test_the_audit_writes_the_spec_files(kv_walkthrough_path, tmp_path):
    run_audit(audit_request(kv_walkthrough_path, tmp_path, "sqlite3", "3.40"))
    audit = json.loads((tmp_path / "wt_kv_quickstart_audit.json").read_text())
    assert set(audit) == {
        "walkthrough_id",
        "walkthrough_title",
        "library_name",
        "library_version",
        "started_at",
        "completed_at",
        "duration_seconds",
        "total_steps",
        "completed_steps",
        "failed_steps",
        "success",
        "gaps",
        "clarity_gaps",
        "prerequisite_gaps",
        "logical_flow_gaps",
        "execution_gaps",
        "completeness_gaps",
        "cross_reference_gaps",
        "critical_gaps",
        "warning_gaps",
        "info_gaps",
        "execution_log",
        "agent_log_path",
    }
    assert (audit["walkthrough_id"], audit["library_name"], audit["library_version"]) == (
        "wt_kv_quickstart",
        "sqlite3",
        "3.40",
    )
    assert audit["critical_gaps"] == 1 and audit["logical_flow_gaps"] == 1 and audit["clarity_gaps"] == 1
    steps = json.loads(audit["execution_log"])
    assert [s["step_number"] for s in steps] == [1, 2, 3, 4, 5]
    assert steps[1]["actions"][0] == {**steps[1]["actions"][0], "kind": "file", "command": "kv.py", "exit_code": 0}
    session = json.loads((tmp_path / "wt_kv_quickstart_session.json").read_text())
    assert session["is_complete"] and session["gaps"] == audit["gaps"]
    log = (tmp_path / "agent_logs" / "audit.log").read_text()
    assert "mcp__walkthrough__next_step" in log and "Bash" in log
    trace = [json.loads(line) for line in (tmp_path / "agent_logs" / "audit_tools.jsonl").read_text().splitlines()]
    tools = [record["tool"] for record in trace]
    assert tools[0] == "mcp__walkthrough__start_walkthrough" and tools[-1] == "mcp__walkthrough__walkthrough_status"
    assert tools.count("mcp__walkthrough__next_step") == 6 and tools.count("mcp__walkthrough__report_gap") == 2
    assert {"Bash", "Write"} <= set(tools)
    assert all({"time", "tool", "input", "output", "duration_ms"} <= set(record) for record in trace)


def test_progress_reaches_the_observer_step_by_step_with_each_gap(kv_walkthrough_path, tmp_path):
    events = []

    class Recorder(AuditObserver):
        def step_started(self, number, total, title):
            events.append(("step", number, total))

        def gap_reported(self, seq, gap):
            events.append(("gap", seq, gap.step_number))

    run_audit(audit_request(kv_walkthrough_path, tmp_path), observer=Recorder())
    assert events == [
        ("step", 1, 5),
        ("step", 2, 5),
        ("step", 3, 5),
        ("gap", 0, 3),
        ("step", 4, 5),
        ("gap", 1, 4),
        ("step", 5, 5),
    ]


def test_a_cancelled_audit_stops_and_still_writes_what_it_found(kv_walkthrough_path, tmp_path):
    class StopAtThree(AuditObserver):
        step = 0

        def step_started(self, number, total, title):
            self.step = number

        def should_stop(self):
            return self.step >= 3

    with pytest.raises(AuditCancelled):
        run_audit(audit_request(kv_walkthrough_path, tmp_path), observer=StopAtThree())
    audit = json.loads((tmp_path / "wt_kv_quickstart_audit.json").read_text())
    assert audit["completed_steps"] == 3 and audit["failed_steps"] == 2 and not audit["success"]


def test_a_given_working_directory_keeps_what_the_steps_made(kv_walkthrough_path, tmp_path):
    run_audit(audit_request(kv_walkthrough_path, tmp_path / "out", working_dir=tmp_path / "work"))
    assert (tmp_path / "work" / "kv-demo" / "kv.py").exists()
    assert (tmp_path / "work" / "kv-demo" / "kv.db").exists()


def test_a_package_one_step_installs_is_there_in_the_next_step_and_gone_in_the_next_run(make_walkthrough, tmp_path):
    import subprocess
    import sys

    def worker_packages():
        return subprocess.run([sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True).stdout

    before = worker_packages()
    installing = make_walkthrough(
        [
            ("Install six", "```bash\npip install six==1.16.0\n```\n\nYou should see `Successfully installed`.", ""),
            ("Use it", "```bash\npython -c 'import six; print(six.__version__)'\n```\n\nIt prints 1.16.0.", ""),
        ],
        name="wt_installs",
    )
    first = run_audit(audit_request(installing, tmp_path / "first"))
    assert [g for g in first.gaps if g.severity in ("critical", "warning")] == []
    using = make_walkthrough(
        [("Use it", "```bash\npython -c 'import six'\n```\n\nIt prints nothing.", "")], name="wt_uses"
    )
    second = run_audit(audit_request(using, tmp_path / "second"))
    assert any(g.severity == "critical" and "six" in g.description for g in second.gaps), second.gaps
    assert worker_packages() == before


def _execution_log(result) -> list[dict]:
    return json.loads(result.execution_log)


def test_a_file_step_never_writes_through_a_link_the_tutorial_planted(make_walkthrough, tmp_path, root_only):
    folder, secret = root_only
    before = secret.stat()
    hostile = make_walkthrough(
        [
            ("Links", f"```bash\nln -s {folder}/made/app.py app.py\nln -s {secret} settings.toml\n```\n", ""),
            ("Create", "Create `app.py`:\n\n```python\nprint('planted')\n```\n", ""),
            ("Update", "Update `settings.toml`:\n\n```toml\n[tool]\nplanted = true\n```\n", ""),
        ],
        name="wt_hostile_writes",
    )
    result = run_audit(audit_request(hostile, tmp_path / "out"))
    assert sorted(path.name for path in folder.iterdir()) == ["secret.txt"]
    after = secret.stat()
    assert secret.read_text() == "ROOT-ONLY-SECRET-7f3a" and (after.st_mode, after.st_uid, after.st_gid) == (
        before.st_mode,
        before.st_uid,
        before.st_gid,
    )
    # The reader, who follows links with its own rights, cannot write there either: that is what the audit shows.
    writes = [a for step in _execution_log(result)[1:] for a in step["actions"] if a["kind"] == "file"]
    assert [a["exit_code"] for a in writes] == [1, 1] and "ROOT-ONLY" not in result.model_dump_json()


def test_a_link_the_tutorial_made_inside_its_own_folder_is_followed_as_the_reader_would(make_walkthrough, tmp_path):
    linked = make_walkthrough(
        [
            ("Dev config", "```bash\necho 'debug = false' > dev.toml\nln -s dev.toml config.toml\n```\n", ""),
            ("Update", "Add to `config.toml`:\n\n```toml\nport = 8000\n```\n", ""),
            ("Check", "```bash\ncat dev.toml\n```\n\nIt prints:\n\n```\ndebug = false\nport = 8000\n```\n", ""),
        ],
        name="wt_linked_config",
    )
    result = run_audit(audit_request(linked, tmp_path / "out"))
    assert [g for g in result.gaps if g.severity != "info"] == [], result.gaps


def test_a_file_written_into_the_readers_virtualenv_changes_no_later_run(make_walkthrough, tmp_path, make_sandbox):
    poisoning = make_walkthrough(
        [
            (
                "Go there",
                "```bash\ncd \"$(python -c 'import site; print(site.getsitepackages()[0])')\"\n"
                "echo \"print('POISONED-BY-ECHO')\" >> _distutils_hack/override.py\n```\n",
                "",
            ),
            ("Create", "Create `_distutils_hack/__init__.py`:\n\n```python\nprint('POISONED')\n```\n", ""),
        ],
        name="wt_poison",
    )
    run_audit(audit_request(poisoning, tmp_path / "out"))
    later = make_sandbox(label="later").run(["python", "-c", "import _distutils_hack; print('clean')"], timeout=60)
    assert later.stdout.strip() == "clean", later.stdout


def test_what_the_rules_look_for_on_disk_never_tells_whether_a_host_file_exists(make_walkthrough, tmp_path, root_only):
    folder, _ = root_only
    probing = make_walkthrough(
        [
            ("Swap", f"```bash\ncd ~ && mv work work.real && ln -s {folder} work && cd work.real\n```\n", ""),
            ("Exists?", "```bash\ncat secret.txt\n```\n", ""),
        ],
        name="wt_oracle",
    )
    result = run_audit(audit_request(probing, tmp_path / "out"))
    # A file in the root-only folder reads as a file that is nowhere: never as one that "exists in" the work folder.
    (gap,) = [g for g in result.gaps if g.step_number == 2]
    assert (gap.gap_type, gap.severity) == ("logical_flow", "critical") and "no earlier step creates" in gap.description
    assert not any("exists in" in g.description for g in result.gaps), result.gaps


def test_a_cancelled_audit_ends_even_when_the_servers_log_is_a_fifo(make_walkthrough, tmp_path, root_worker):
    log = "/run/stackbench/background-0.log"
    serving = make_walkthrough(
        [("Serve", f"```bash\nrm -f {log}; mkfifo {log}; python3 -m http.server 8000\n```\n", "")], name="wt_fifo"
    )
    cancelled_at = []

    class CancelAfterASecond(AuditObserver):
        started = None

        def step_started(self, number, total, title):
            self.started = time.monotonic()

        def should_stop(self):
            if self.started and time.monotonic() - self.started > 1:
                cancelled_at.append(time.monotonic())
                return True
            return False

    with pytest.raises(AuditCancelled):
        run_audit(audit_request(serving, tmp_path / "out"), observer=CancelAfterASecond())
    # A FIFO waited on, or a server left running, would never end: 30 s tells that from an end on a loaded machine.
    assert time.monotonic() - cancelled_at[0] < 30
    wait_for(lambda: not sandbox_processes(), timeout=30, message="every process of the run to end")


def test_a_missing_tool_a_reader_would_install_is_installed_and_the_tutorial_goes_on(make_walkthrough, tmp_path):
    path = make_walkthrough(
        [
            ("Check uv", "```bash\nuv --version\n```\n\nIt prints uv's version.", ""),
            ("Next", "```bash\necho next\n```\n\nIt prints `next`.", ""),
        ],
        name="wt_missing_tool",
    )
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0"))
    (gap,) = [g for g in result.gaps if g.severity in ("critical", "warning")]
    assert (gap.step_number, gap.gap_type, gap.severity) == (1, "prerequisite", "warning")
    assert "Fixed by `python3 -m pip install --quiet uv` to go on" in gap.description
    first = _execution_log(result)[0]["actions"]
    assert first[-1]["exit_code"] == 0 and "\nuv 0." in "\n" + first[-1]["output_tail"]


def test_the_audited_library_a_command_cannot_import_is_installed_at_its_version(make_walkthrough, tmp_path):
    path = make_walkthrough(
        [("Use it", "```bash\npython3 -c 'import six; print(six.__version__)'\n```\n\nIt prints 1.16.0.", "")],
        name="wt_missing_library",
    )
    result = run_audit(audit_request(path, tmp_path, "six", "1.16.0"))
    (gap,) = [g for g in result.gaps if g.severity in ("critical", "warning")]
    assert (gap.gap_type, gap.severity) == ("prerequisite", "warning")
    assert "Fixed by `python3 -m pip install --quiet six==1.16.0` to go on" in gap.description
    assert _execution_log(result)[0]["actions"][-1]["output_tail"].splitlines()[-1] == "1.16.0"


def test_the_audited_library_is_installed_from_the_registry_its_page_installs_it_from():
    from stackbench.auditing.gap_rules import History
    from stackbench.auditing.rules import _library_install

    npm = History(seen_text="Install it with `npm install --global http-server`.", library="http-server")
    npm.library_version = "14.1.1"
    assert _library_install(npm) == "npm install --global --silent http-server@14.1.1"
    npx = History(seen_text="Run it:\n\n    npx http-server@latest ./public\n", library="http-server")
    assert _library_install(npx).startswith("npm install --global")
    pypi = History(seen_text="pip install hatch, then hatch new", library="hatch", library_version="1.16.5")
    assert _library_install(pypi) == "python3 -m pip install --quiet hatch==1.16.5"


def test_an_unnamed_block_that_grows_the_program_the_reader_saved_goes_in_the_same_file(make_walkthrough, tmp_path):
    first = "import sys\n\n\ndef main():\n    print('hello')\n\n\nmain()\n"
    grown = "import sys\n\n\ndef main():\n    print('hello', sys.argv[1])\n\n\nmain()\n"
    path = make_walkthrough(
        [
            (
                "Start",
                f"```python\n{first}```\n\nCopy that to a file `main.py`.\n\n```console\n$ python3 main.py\nhello\n```\n",
                "",
            ),
            (
                "Grow",
                f"Now take a name:\n\n```python\n{grown}```\n\n```console\n$ python3 main.py Ada\nhello Ada\n```\n",
                "",
            ),
            ("Explain", "The function's shape:\n\n```python\ndef main():\n    pass\n```\n\nThat is all.", ""),
        ],
        name="wt_grows",
    )
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0"))
    assert [g for g in result.gaps if g.severity in ("critical", "warning")] == []
    steps = _execution_log(result)
    assert [(a["kind"], a["command"]) for a in steps[1]["actions"]] == [
        ("file", "main.py"),
        ("command", "python3 main.py Ada"),
    ]
    assert steps[2]["actions"][0]["kind"] == "python", "a lone signature is not a new version of the program"


def test_a_command_that_keeps_running_and_announces_an_address_is_a_server_whatever_its_name(
    make_walkthrough, tmp_path
):
    serve = (
        "python3 -c \"import http.server as h; print('listening on http://localhost:8124', flush=True); "
        "h.HTTPServer(('127.0.0.1', 8124), h.SimpleHTTPRequestHandler).serve_forever()\""
    )
    path = make_walkthrough(
        [
            ("Serve", f"```bash\necho hello > hello.txt\n{serve}\n```\n\nOpen http://localhost:8124/hello.txt.", ""),
            ("Next", "```bash\necho next\n```\n\nIt prints `next`.", ""),
        ],
        name="wt_unnamed_server",
    )
    started = time.monotonic()
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0", sandbox=sandbox_settings(timeout=120)))
    assert time.monotonic() - started < 60, "not waited out to the time limit"
    assert [g for g in result.gaps if g.severity in ("critical", "warning")] == []
    first = _execution_log(result)[0]["actions"]
    assert first[-1]["kind"] == "request" and first[-1]["exit_code"] == 0 and "hello" in first[-1]["output_tail"]
    assert "a server; started again in the background" in first[1]["output_tail"]
    assert first[1]["output_tail"].count("[it kept running") == 1, "what it printed, then the note, then its log"
    assert result.completed_steps == 2


def test_questions_the_page_leaves_unanswered_are_answered_with_their_defaults_to_go_on(make_walkthrough, tmp_path):
    ask = "python3 -c \"name = input('Project name [demo]: ') or 'demo'; print('made', name)\""
    path = make_walkthrough([("Init", f"```bash\n{ask}\n```\n\nIt prints `made demo`.", "")], name="wt_asks")
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0"))
    assert [(g.gap_type, g.severity) for g in result.gaps] == [("clarity", "info")]
    assert "answered each with its default (Enter) in a terminal to go on" in result.gaps[0].description
    assert result.completed_steps == 1


def test_one_command_may_need_two_evident_fixes_in_a_row(make_walkthrough, tmp_path):
    command = "uv --version && python3 -c 'import six; print(six.__version__)'"
    path = make_walkthrough([("Both", f"```bash\n{command}\n```\n\nIt prints 1.16.0.", "")], name="wt_two_fixes")
    result = run_audit(audit_request(path, tmp_path, "six", "1.16.0"))
    fixes = sorted(g.description.split("Fixed by ")[1] for g in result.gaps if "Fixed by" in g.description)
    assert fixes == [
        "`python3 -m pip install --quiet six==1.16.0` to go on, as a reader would.",
        "`python3 -m pip install --quiet uv` to go on, as a reader would.",
    ]
    assert _execution_log(result)[0]["actions"][-1]["output_tail"].splitlines()[-1] == "1.16.0"


def test_a_file_the_page_shows_as_made_is_compared_with_the_one_on_disk_never_written(make_walkthrough, tmp_path):
    path = make_walkthrough(
        [
            ("Make", "```bash\nprintf 'name = \"demo\"\\nport = 8000\\n' > app.toml\n```\n\nIt writes `app.toml`.", ""),
            ("Check", 'Your `app.toml` now looks like this:\n\n```toml\nname = "demo"\n...\n```\n', ""),
            ("Wrong", 'The tool should have written this in your `app.toml`:\n\n```toml\nname = "other"\n```\n', ""),
        ],
        name="wt_compares",
    )
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0"))
    serious = [(g.step_number, g.gap_type, g.severity) for g in result.gaps if g.severity != "info"]
    assert serious == [(3, "execution_error", "warning")]
    assert "The page shows what `app.toml` holds at this point" in result.gaps[-1].description
    steps = _execution_log(result)
    assert [a["kind"] for a in steps[1]["actions"] + steps[2]["actions"]] == ["compare", "compare"]
    assert [a["exit_code"] for a in steps[1]["actions"] + steps[2]["actions"]] == [0, 1]
    assert 'name = "other"' in result.gaps[-1].context


def test_a_version_the_registry_here_lacks_is_replaced_by_the_audited_one_as_an_environment_note(
    make_walkthrough, tmp_path
):
    path = make_walkthrough(
        [("Install", "```bash\npip install six==99.0\n```\n\nThen `python3 -c 'import six'` works.", "")],
        name="wt_no_such_version",
    )
    result = run_audit(audit_request(path, tmp_path, "six", "1.16.0"))
    assert [g for g in result.gaps if g.severity in ("critical", "warning")] == []
    (record,) = _execution_log(result)
    assert "the audited version (1.16.0) was installed instead" in record["environment_notes"][0]
    assert record["actions"][-1]["command"] == "pip install six==1.16.0" and record["actions"][-1]["exit_code"] == 0


def test_a_local_https_server_with_the_readers_own_certificate_is_requested_as_a_browser_would(
    make_walkthrough, tmp_path
):
    make_cert = "openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 -subj /CN=localhost"
    serve = (
        "python3 -c \"import http.server as h, ssl; s = h.HTTPServer(('127.0.0.1', 8443), h.SimpleHTTPRequestHandler); "
        "c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain('cert.pem', 'key.pem'); "
        "s.socket = c.wrap_socket(s.socket, server_side=True); print('serving on https://localhost:8443', flush=True); "
        's.serve_forever()"'
    )
    path = make_walkthrough(
        [("TLS", f"```bash\n{make_cert}\necho hi > hi.txt\n{serve}\n```\n\nOpen https://localhost:8443/hi.txt.", "")],
        name="wt_https",
    )
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0"))
    assert [g for g in result.gaps if g.severity in ("critical", "warning")] == []
    request = _execution_log(result)[0]["actions"][-1]
    assert request["kind"] == "request" and request["exit_code"] == 0 and "hi" in request["output_tail"]


def test_a_tree_the_page_shows_as_made_is_looked_for_in_the_readers_folder(make_walkthrough, tmp_path):
    tree = "```\nmy-app/\n├── src/\n│   └── main.py   # the app\n└── README.md\n```\n"
    path = make_walkthrough(
        [
            (
                "Make",
                "```bash\nmkdir -p my-app/src && touch my-app/src/main.py my-app/README.md\n```\n\nIt makes the app.",
                "",
            ),
            ("Look", f"The generated project looks like this:\n\n{tree}", ""),
            ("Other", f"A typical layout, for reference:\n\n{tree.replace('my-app', 'other-app')}", ""),
            ("Gone", f"```bash\nrm -r my-app/src\n```\n\nThe created folder now looks like this:\n\n{tree}", ""),
            ("Read", "```bash\ncat my-app/src/main.py\n```\n\nIt prints the app.", ""),
        ],
        name="wt_tree",
    )
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0"))
    assert [(g.step_number, g.gap_type, g.severity) for g in result.gaps if g.severity != "info"] == [
        (4, "logical_flow", "warning")
    ]
    (later,) = [g for g in result.gaps if g.step_number == 5]
    assert later.severity == "info" and later.description.startswith("A consequence of step 4")
    tree_gap = next(g for g in result.gaps if g.step_number == 4)
    assert "2 of the 3 paths shown are missing: `my-app/src`, `my-app/src/main.py`" in tree_gap.description
    steps = _execution_log(result)
    assert [a["kind"] for a in steps[1]["actions"]] == ["tree"] and steps[2]["actions"] == []


def test_output_a_fixed_command_printed_earlier_is_remembered_for_the_command_the_page_shows(
    make_walkthrough, tmp_path
):
    run = "uv run --no-project python3 main.py"
    path = make_walkthrough(
        [
            (
                "Start",
                f"Create `main.py`:\n\n```python\nprint('Hello World')\n```\n\n```console\n$ {run}\nHello World\n```\n",
                "",
            ),
            ("Grow", "Update `main.py`:\n\n```python\nimport sys\nprint('Hello', sys.argv[1])\n```\n", ""),
            ("Again", f"As before:\n\n```console\n$ {run}\nHello World\n```\n", ""),
        ],
        name="wt_fixed_then_changed",
    )
    result = run_audit(audit_request(path, tmp_path, "demo", "1.0"))
    assert [(g.step_number, g.gap_type) for g in result.gaps if g.severity != "info"] == [
        (1, "prerequisite"),
        (3, "logical_flow"),
    ]
