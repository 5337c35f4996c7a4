import json
import re
import subprocess
import sys

import pytest

from stackbench.formats.results import GATE_LEVELS
from stackbench_site.cli import main
from tests.builders import BASE_DIR, stackbench

COMMANDS = ("import", "up", "worker", "walkthrough", "validate", "extract", "gate", "user", "token", "mcp-server")
# Every option of every command, short forms included: scripts and CI jobs call them by these names.
OPTIONS = {
    ("import",): ["--library"],
    ("up",): ["--host", "--port", "--workers", "--no-sample"],
    ("worker",): ["--concurrency", "--queues", "--beat"],
    ("walkthrough", "audit"): ["-w", "--walkthrough", "-l", "--library", "-v", "--version", "-o", "--output"]
    + ["--working-dir", "--backend", "--timeout"],
    ("walkthrough", "generate"): ["--doc-path", "-l", "--library", "-v", "--version", "-o", "--output"]
    + ["--docs-root", "--backend"],
    ("validate",): ["--extraction", "--output", "--num-workers", "--timeout", "--find-links", "--no-index"],
    ("extract",): ["--docs", "--include", "--library", "--version", "--output"],
    ("gate",): ["--run", "--fail-on", "--url", "--token"],
    ("user",): ["--role", "--email", "--password"],
    ("token",): ["--user", "--name"],
}


def plain(text):
    """Help and errors without the colours a CI runner may force on."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def test_help_lists_every_command(capsys):
    for flag in ("--help", "-h"):
        assert main([flag]) == 0
        listed = plain(capsys.readouterr().out)
        for command in (*COMMANDS, "present-server"):
            assert re.search(rf"^\W*{command}\s", listed, re.MULTILINE), f"{command} is not in stackbench {flag}"
    assert main(["walkthrough", "--help"]) == 0
    listed = plain(capsys.readouterr().out)
    assert re.search(r"^\W*audit\s", listed, re.MULTILINE) and re.search(r"^\W*generate\s", listed, re.MULTILINE)


@pytest.mark.parametrize("command", OPTIONS, ids=" ".join)
def test_each_command_keeps_its_options(command, capsys):
    assert main([*command, "--help"]) == 0
    shown = plain(capsys.readouterr().out)
    missing = [o for o in OPTIONS[command] if not re.search(rf"(?<![\w-]){o}(?![\w-])", shown)]
    assert not missing, f"stackbench {' '.join(command)} lost {missing}"


@pytest.mark.parametrize(
    "args, complaint",
    [
        ([], "Missing command"),
        (["nosuch"], "No such command"),
        (["validate", "--bogus"], "No such option: --bogus"),
        (["walkthrough", "audit"], "Missing option '-w' / '--walkthrough'"),
        (["gate", "--run", "1", "--fail-on", "everything"], "--fail-on"),
        (["up", "--port", "eighty"], "--port"),
        (["worker", "--no-beat"], "No such option: --no-beat"),
    ],
)
def test_a_usage_error_exits_2_with_the_usage_on_stderr_and_nothing_on_stdout(args, complaint, capsys):
    assert main(args) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert "Usage: stackbench" in plain(said.err) and complaint in plain(said.err)


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["walkthrough", "audit", "-w", "nope.json", "-l", "toolz", "-v", "1", "-o", "out"]
            + ["--working-dir", "here", "--backend", "claude", "--timeout", "5"],
            "stackbench: nope.json: no such file\n",
        ),
        (
            ["walkthrough", "generate", "--doc-path", "nope.md", "-l", "toolz", "-v", "1", "-o", "out"]
            + ["--docs-root", "docs", "--backend", "rules"],
            "stackbench: nope.md: no such file\n",
        ),
        (
            ["validate", "--extraction", "nope", "--output", "out", "--num-workers", "2", "--timeout", "3"]
            + ["--find-links", "a", "--find-links", "b", "--no-index"],
            "stackbench: nope: no such folder\n",
        ),
        (
            ["extract", "--docs", "nope", "--include", "*.md", "--library", "toolz", "--version", "1"]
            + ["--output", "out"],
            "stackbench: nope: no such folder\n",
        ),
    ],
    ids=["audit", "generate", "validate", "extract"],
)
def test_an_engine_command_takes_all_its_options_and_says_why_it_cannot_run(args, message, tmp_path, capsys):
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        assert main(args) == 2
    said = capsys.readouterr()
    assert said.err == message and said.out == ""
    assert not (tmp_path / "out").exists()


def test_walkthrough_audit_prints_progress_and_a_summary_and_exits_zero(kv_walkthrough_path, tmp_path):
    done = stackbench(
        "walkthrough", "audit", "-w", str(kv_walkthrough_path), "-l", "sqlite3", "-v", "3.40", "-o", str(tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert "Step 3/5  Load the seed data" in done.stdout
    assert "CRITICAL logical_flow" in done.stdout
    assert re.search(r"^logical_flow\s+1\s+0\s+0\s+1$", done.stdout, re.MULTILINE)
    audit = json.loads((tmp_path / "wt_kv_quickstart_audit.json").read_text())
    assert (audit["library_name"], audit["library_version"]) == ("sqlite3", "3.40")


def test_walkthrough_audit_fails_clearly_when_it_cannot_run(tmp_path):
    missing = stackbench("walkthrough", "audit", "-w", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "nope.json: no such file" in missing.stderr
    (tmp_path / "wt_bad.json").write_text('{"steps": []}')
    bad = stackbench("walkthrough", "audit", "-w", str(tmp_path / "wt_bad.json"), "-o", str(tmp_path / "out"))
    assert (
        bad.returncode == 2 and "the audit could not run" in bad.stderr and "walkthrough: Field required" in bad.stderr
    )
    assert not (tmp_path / "out" / "wt_bad_audit.json").exists()


def test_library_defaults_come_from_the_walkthrough_metadata(make_walkthrough, tmp_path):
    path = make_walkthrough([("One", "Read this.", "")])
    data = json.loads(path.read_text())
    data["metadata"].update(library="toolz", libraryVersion="0.12.1")
    path.write_text(json.dumps(data))
    assert stackbench("walkthrough", "audit", "-w", str(path), "-o", str(tmp_path / "out")).returncode == 0
    audit = json.loads((tmp_path / "out" / "wt_test_audit.json").read_text())
    assert (audit["library_name"], audit["library_version"]) == ("toolz", "0.12.1")


@pytest.mark.django_db(transaction=True)
def test_import_reports_each_file_and_fails_on_a_bad_one(sample_dir, tmp_path, child_env):
    good = stackbench("import", str(sample_dir / "extraction"), env=child_env)
    assert good.returncode == 0, good.stderr
    assert "created    extraction" in good.stdout and "skipped" in good.stdout
    again = stackbench("import", str(sample_dir / "extraction"), env=child_env)
    assert "unchanged  extraction" in again.stdout
    (tmp_path / "wt_x.json").write_text("{")
    bad = stackbench("import", str(tmp_path / "wt_x.json"), env=child_env)
    assert bad.returncode == 1 and "not valid JSON" in bad.stdout and "nothing from them was stored" in bad.stderr


def test_the_mcp_server_command_shows_its_options():
    done = stackbench("mcp-server", "--help")
    assert done.returncode == 0 and "--allowed-root" in done.stdout


def test_the_present_server_command_explains_itself_instead_of_waiting_on_stdin():
    done = stackbench("present-server", "--help")
    assert done.returncode == 0 and "present_walkthrough" in done.stdout


def test_validate_prints_each_document_and_a_summary(sample_dir, tmp_path):
    done = stackbench(
        "validate",
        "--extraction",
        str(sample_dir / "extraction"),
        "--output",
        str(tmp_path / "out"),
        "--num-workers",
        "2",
    )
    assert done.returncode == 0, done.stderr
    assert "toolz_intro.md: 3 passed, 1 failed, 0 skipped" in done.stdout
    assert "error: ImportError: cannot import name 'pipee'" in done.stdout
    assert "2 failed (1 error, 1 warning, 0 info)" in done.stdout
    assert (tmp_path / "out" / "validation_summary.json").exists()


def test_validate_offline_from_a_wheelhouse(tmp_path, wheelhouse):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "demo_analysis.json").write_text(
        json.dumps(
            {
                "page": "demo.md",
                "library": "sbdemo",
                "version": "1.0.0",
                "language": "python",
                "signatures": [],
                "examples": [
                    {
                        "library": "sbdemo",
                        "language": "python",
                        "code": "import sbdemo\nprint(sbdemo.greet('x'))",
                        "line": 3,
                        "context": "Hello",
                        "execution_context": "sync",
                    }
                ],
                "processed_at": "2026-11-01T00:00:00Z",
                "warnings": [],
            }
        )
    )
    done = stackbench(
        "validate",
        "--extraction",
        str(tmp_path / "in"),
        "--output",
        str(tmp_path / "out"),
        "--find-links",
        str(wheelhouse),
        "--no-index",
    )
    assert done.returncode == 0, done.stderr
    assert "demo.md: 1 passed, 0 failed, 0 skipped" in done.stdout


def test_validate_exits_non_zero_naming_the_page_that_could_not_be_set_up(tmp_path, wheelhouse):
    (tmp_path / "in").mkdir()
    analysis = {
        "page": "needs.md",
        "library": "sbdemo",
        "version": "1.0.0",
        "examples": [{"code": "import sbnowhere\nprint(1)", "line": 3}],
        "requirements": [{"requirement": "sbnowhere", "line": 1}],
    }
    (tmp_path / "in" / "needs_analysis.json").write_text(json.dumps(analysis))
    done = stackbench(
        "validate",
        "--extraction",
        str(tmp_path / "in"),
        "--output",
        str(tmp_path / "out"),
        "--find-links",
        str(wheelhouse),
        "--no-index",
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stdout.count("could not set up: Installing sbnowhere failed") == 1
    assert "could not be fully set up: needs.md" in done.stderr


def test_validate_refuses_a_missing_folder(tmp_path):
    done = stackbench("validate", "--extraction", str(tmp_path / "nope"), "--output", str(tmp_path / "out"))
    assert done.returncode == 2 and "no such folder" in done.stderr


@pytest.mark.django_db(transaction=True)
def test_gate_fails_on_new_critical_problems_and_passes_when_nothing_is_new(
    kv_walkthrough_path, import_audit, child_env
):
    from audits.importing import import_paths
    from tests.builders import KV_GAPS

    import_paths([kv_walkthrough_path], library_name="sqlite3")
    first = import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    second = import_audit(gaps=KV_GAPS, started="2026-11-02T10:00:00Z")
    failing = stackbench("gate", "--run", str(first.pk), "--fail-on", "new-critical", env=child_env)
    assert (
        failing.returncode == 1 and "CRITICAL" in failing.stdout and "Gate failed: 1 new or regressed" in failing.stdout
    )
    passing = stackbench("gate", "--run", str(second.pk), "--fail-on", "new-info", env=child_env)
    assert passing.returncode == 0 and "Gate passed: no new or regressed problems" in passing.stdout
    still_open = stackbench("gate", "--run", str(second.pk), env=child_env)
    assert still_open.returncode == 1 and "Gate failed: 1 open problem(s) at critical or above." in still_open.stdout
    missing = stackbench("gate", "--run", "999999", env=child_env)
    assert missing.returncode == 2 and "there is no run 999999" in missing.stderr


@pytest.mark.django_db(transaction=True)
def test_gate_through_the_api_of_a_running_dashboard(kv_walkthrough_path, import_audit, live_server, child_env):
    from audits.importing import import_paths
    from audits.models import ApiToken
    from tests.builders import KV_GAPS, make_user

    import_paths([kv_walkthrough_path], library_name="sqlite3")
    run = import_audit(gaps=KV_GAPS)
    _, key = ApiToken.issue(make_user("ci"), "ci")
    remote = stackbench(
        "gate",
        "--run",
        str(run.pk),
        "--fail-on",
        "new-warning",
        "--url",
        live_server.url,
        "--token",
        key,
        env={**child_env, "DATABASE_URL": "sqlite:////nonexistent/unused.db"},
    )
    assert remote.returncode == 1 and "Gate failed: 2 new or regressed" in remote.stdout
    refused = stackbench("gate", "--run", str(run.pk), "--url", live_server.url, "--token", "sb_wrong", env=child_env)
    assert refused.returncode == 2 and "answered 401" in refused.stderr


@pytest.mark.django_db(transaction=True)
def test_the_gate_judges_alike_from_the_database_and_through_the_api(
    kv_walkthrough_path, import_audit, live_server, capsys
):
    from audits.importing import import_paths
    from audits.models import ApiToken, Run
    from audits.reports import gate_report
    from tests.builders import KV_GAPS, make_user

    import_paths([kv_walkthrough_path], library_name="sqlite3")
    first = import_audit(gaps=KV_GAPS, started="2026-11-01T10:00:00Z")
    second = import_audit(gaps=KV_GAPS[:1], started="2026-11-02T10:00:00Z")
    failed = import_audit(gaps=(), started="2026-11-03T10:00:00Z")
    Run.objects.filter(pk=failed.pk).update(status="failed")
    _, key = ApiToken.issue(make_user("ci"), "ci")
    verdicts = set()
    for run in (first, second, Run.objects.get(pk=failed.pk)):
        for level in GATE_LEVELS:
            gate = ["gate", "--run", str(run.pk), "--fail-on", level]
            local = main(gate), capsys.readouterr()
            remote = main([*gate, "--url", live_server.url, "--token", key]), capsys.readouterr()
            assert local == remote, f"run {run.pk} at {level}"
            assert local[0] == (0 if gate_report(run, level).passed else 1)
            verdicts.add(local[1].out.splitlines()[-1].split(":")[0])
    assert verdicts == {"Gate failed", "Gate passed", f"Run {failed.pk} did not succeed (failed)"}


@pytest.mark.django_db(transaction=True)
def test_user_and_token_commands(child_env):
    from django.contrib.auth.models import User

    made = stackbench("user", "dana", "--role", "triager", env=child_env)
    assert made.returncode == 0 and "dana is a triager; password: " in made.stdout
    dana = User.objects.get(username="dana")
    assert dana.has_perm("audits.triage_problem") and not dana.has_perm("audits.start_run")
    stackbench("user", "dana", "--role", "maintainer", env=child_env)
    assert User.objects.get(username="dana").has_perm("audits.start_run")
    token = stackbench("token", "--user", "dana", env=child_env)
    assert token.returncode == 0 and token.stdout.startswith("sb_")


def _can_mount_privately():
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


FAULTS = {
    # A tmpfs filled to the last byte before the command starts, and a read-only one.
    "disk full": 'mount -t tmpfs -o size=64k tmpfs "$OUT" && (head -c 1M /dev/zero > "$OUT/filler" 2>/dev/null; true)',
    "read-only": 'mount -t tmpfs -o ro tmpfs "$OUT"',
}


@pytest.mark.skipif(not _can_mount_privately(), reason="needs a private mount namespace (unshare -m)")
@pytest.mark.parametrize(
    "fault, expected", [("disk full", "No space left on device"), ("read-only", "Read-only file system")]
)
@pytest.mark.parametrize("command", ["audit", "validate"])
def test_an_output_folder_that_cannot_be_written_is_a_clear_error_and_leaves_no_json(
    command, fault, expected, kv_walkthrough_path, sample_dir, tmp_path
):
    out = tmp_path / "out"
    out.mkdir()
    args = {
        "audit": ["walkthrough", "audit", "-w", str(kv_walkthrough_path), "-o", str(out)],
        "validate": ["validate", "--extraction", str(sample_dir / "extraction"), "--output", str(out)],
    }[command]
    cli = " ".join(f"'{arg}'" for arg in [sys.executable, "-m", "stackbench_site.cli", *args])
    # The mount lives in a namespace of its own, so it disappears with the command; list its files before it does.
    script = f'{FAULTS[fault]} && {cli}; echo "exit=$?"; find "$OUT" -type f'
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script],
        env={**child_env_base(), "OUT": str(out)},
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    exit_line = re.search(r"^exit=(\d+)$", done.stdout, re.MULTILINE)
    assert exit_line and exit_line.group(1) != "0", done.stdout + done.stderr
    assert expected in done.stderr and str(out) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout[exit_line.end() :].split() in ([], [str(out / "filler")])


def child_env_base():
    import os

    return {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
