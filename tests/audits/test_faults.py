"""Faults with real processes: workers killed mid-run, cancellation during long commands, a broker that goes
away and comes back. (A full or read-only output folder is in tests/stackbench_site/test_cli.py.)"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from audits.actions import RunNotStarted, do_start_audit
from audits.importing import import_paths
from audits.models import ExampleResult, Run, RunStatus, ValidationDocument
from audits.tasks import recover_stale_runs, run_audit_task, validate_document_task
from tests.builders import BASE_DIR, as_postgres, start_worker, stop_worker, wait_for
from walkthroughs.models import DocPage, Library, Walkthrough

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SLOW_WALKTHROUGH = [
    ("Warm up", "```bash\npython3 -c 'print(1)'\n```", ""),
    ("Wait", "```bash\nsleep 6\n```\n\nIt prints nothing.", ""),
    ("Finish", "```bash\necho done\n```\n\nIt prints `done`.", ""),
]


@pytest.fixture
def slow_walkthrough(make_walkthrough):
    import_paths([make_walkthrough(SLOW_WALKTHROUGH, name="wt_slow")], library_name="demo")
    return Walkthrough.objects.get(walkthrough_id="wt_slow")


@pytest.fixture
def workers(child_env, tmp_path, wheelhouse):
    env = {**child_env, "STACKBENCH_FIND_LINKS": str(wheelhouse), "STACKBENCH_NO_INDEX": "true"}
    started = []

    def start(queues="faults"):
        process = start_worker(env, tmp_path / f"worker-{len(started)}.log", queues=queues)
        started.append(process)
        return process

    yield start
    for process in started:
        stop_worker(process)


def kill(worker):
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()


def queued_audit(walkthrough):
    run = Run.objects.create(
        kind="audit",
        library=walkthrough.library,
        walkthrough=walkthrough,
        backend="rules",
        status=RunStatus.QUEUED,
        progress_total=3,
    )
    run_audit_task.apply_async((run.pk,), queue="faults")
    return run


def fresh(run):
    return Run.objects.get(pk=run.pk)


def test_an_audit_whose_worker_is_killed_is_queued_again_and_keeps_its_gaps_once(slow_walkthrough, workers):
    first = workers()
    run = queued_audit(slow_walkthrough)
    wait_for(
        lambda: fresh(run).progress_current >= 2 and run.gaps.exists(),
        message=lambda: f"the audit to reach step 2: {fresh(run).status} {fresh(run).error}",
    )
    kill(first)
    time.sleep(2.5)
    assert fresh(run).status == RunStatus.RUNNING, "nothing else moves a run whose worker died"
    assert recover_stale_runs(stale_seconds=2) == [(run.pk, "requeued")]
    assert fresh(run).status == RunStatus.QUEUED and "Queued again" in fresh(run).progress_label
    workers(queues="celery,faults")
    done = wait_for(lambda: fresh(run) if not fresh(run).is_active else None, message="the second attempt")
    assert (done.status, done.attempts) == (RunStatus.SUCCEEDED, 2), done.error
    assert list(done.gaps.values_list("seq", "step_number", "gap_type")) == [(0, 1, "completeness")], list(
        done.gaps.values_list("description", flat=True)
    )


def test_a_run_that_dies_twice_is_failed_with_the_reason(slow_walkthrough, workers):
    first = workers()
    run = queued_audit(slow_walkthrough)
    wait_for(lambda: fresh(run).progress_current >= 2, message="the first attempt to reach step 2")
    kill(first)
    time.sleep(2.5)
    recover_stale_runs(stale_seconds=2)
    second = workers(queues="celery,faults")
    wait_for(lambda: fresh(run).attempts == 2 and fresh(run).progress_current >= 2, message="the second attempt")
    kill(second)
    time.sleep(2.5)
    assert recover_stale_runs(stale_seconds=2) == [(run.pk, "failed")]
    failed = fresh(run)
    assert failed.status == RunStatus.FAILED and "stopped reporting" in failed.error and "2 times" in failed.error
    assert failed.gaps.count() == 1, "what it found before is kept"


def child_processes(pid):
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


def test_killing_a_workers_idle_pool_processes_does_not_stop_it_taking_runs(slow_walkthrough, workers):
    # On the filesystem broker a prefork worker wedged here: its idle children share one lock on the job pipe,
    # and the one killed while waiting for work died holding it.
    worker = workers()
    time.sleep(1)
    for child in child_processes(worker.pid):
        os.kill(child, signal.SIGKILL)
    time.sleep(1.5)
    run = queued_audit(slow_walkthrough)
    done = wait_for(lambda: fresh(run) if not fresh(run).is_active else None, timeout=60, message="the run to end")
    assert (done.status, done.attempts) == (RunStatus.SUCCEEDED, 1), done.error


def test_each_recovery_check_ends_what_a_killed_worker_left_running_and_removes_its_folders(workers, tmp_path):
    from audits.tasks import recover_stale_runs_task

    worker = workers()
    dead = subprocess.Popen(["true"])
    dead.wait()
    leftover = Path(tempfile.gettempdir()) / f"stackbench_sandbox_{dead.pid}_claude_wt_gone_ab12"
    (leftover / "work").mkdir(parents=True)
    lingering = subprocess.Popen(["sleep", "600"], cwd=leftover / "work", start_new_session=True)
    recover_stale_runs_task.apply_async(queue="faults")
    assert lingering.wait(timeout=30) == -signal.SIGKILL
    wait_for(lambda: not leftover.exists(), timeout=10, message="the dead worker's folder to go")
    assert worker.poll() is None


def test_a_dead_run_found_while_the_broker_is_down_is_requeued_by_a_later_check(slow_walkthrough, use_broker):
    run = Run.objects.create(
        kind="audit",
        library=slow_walkthrough.library,
        walkthrough=slow_walkthrough,
        backend="rules",
        status=RunStatus.RUNNING,
        attempts=1,
        heartbeat_at=timezone.now() - timedelta(minutes=5),
    )
    use_broker("redis://127.0.0.1:1/0")
    assert recover_stale_runs(stale_seconds=2) == []
    assert fresh(run).status == RunStatus.RUNNING, "not left queued with nothing in the queue"
    use_broker("memory://")
    assert recover_stale_runs(stale_seconds=2) == [(run.pk, "requeued")]
    assert fresh(run).status == RunStatus.QUEUED


def test_a_validation_whose_worker_is_killed_resumes_its_document(workers, tmp_path):
    from stackbench.formats.walkthrough import ExtractionAnalysis

    slow = "import time\ntime.sleep(2)\nprint('ok')"
    analysis = ExtractionAnalysis(
        page="slow.md",
        library="sbdemo",
        version="1.0.0",
        examples=[{"code": slow, "line": 3 + 10 * i} for i in range(3)],
    )
    library = Library.objects.create(name="sbdemo", default_version="1.0.0")
    page, _ = DocPage.store_analysis(library, analysis, None)
    run = Run.objects.create(
        kind="validation",
        library=library,
        library_version="1.0.0",
        backend="venv",
        status=RunStatus.QUEUED,
        progress_total=3,
    )
    run.doc_pages.add(page)
    document = ValidationDocument.objects.create(
        run=run, doc_page=page, page=page.page, library_name="sbdemo", version="1.0.0"
    )
    first = workers()
    validate_document_task.apply_async((run.pk, document.pk), queue="faults")
    wait_for(lambda: document.results.exists(), message="the first example result")
    kept = document.results.get(example_index=0).pk
    kill(first)
    time.sleep(2.5)
    assert recover_stale_runs(stale_seconds=2) == [(run.pk, "requeued")]
    workers(queues="celery,faults")
    done = wait_for(lambda: fresh(run) if not fresh(run).is_active else None, timeout=90, message="the second attempt")
    assert done.status == RunStatus.SUCCEEDED, done.error
    assert list(ExampleResult.objects.filter(document__run=run).values_list("example_index", "status")) == [
        (0, "success"),
        (1, "success"),
        (2, "success"),
    ]
    assert document.results.get(example_index=0).pk == kept


def sleepers(marker):
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    return [pid for pid in found if int(pid) != os.getpid()]


def test_cancelling_kills_the_whole_process_tree_of_a_long_command(make_walkthrough, workers):
    marker = "sleep 3131"
    path = make_walkthrough(
        [("Long", f"```bash\nbash -c '{marker} & {marker}' & {marker}; wait\n```", "")], name="wt_long"
    )
    import_paths([path], library_name="demo")
    walkthrough = Walkthrough.objects.get(walkthrough_id="wt_long")
    workers()
    run = queued_audit(walkthrough)
    wait_for(lambda: len(sleepers(marker)) >= 3, message="the long command to start its children")
    run.request_cancel()
    # The sleepers would live for almost an hour: gone within 30 s means the cancel killed them.
    wait_for(lambda: not sleepers(marker), timeout=30, interval=0.1, message="every process of the command to die")
    assert fresh(run).status == RunStatus.CANCELLED


def test_cancelling_a_validation_stops_a_long_example(workers):
    from audits.actions import do_start_validation
    from stackbench.formats.walkthrough import ExtractionAnalysis

    marker = "sleep 7272.5"
    code = "import subprocess, time\nsubprocess.Popen(['sleep', '7272.5'])\ntime.sleep(300)"
    library = Library.objects.create(name="sbdemo", default_version="1.0.0")
    page, _ = DocPage.store_analysis(
        library, ExtractionAnalysis(page="hang.md", library="sbdemo", version="1.0.0", examples=[{"code": code}]), None
    )
    workers(queues="celery")
    run = do_start_validation(library, [page])
    wait_for(lambda: sleepers(marker), timeout=60, message="the example to start")
    run.request_cancel()
    wait_for(lambda: not sleepers(marker), timeout=10, interval=0.1, message="the example's processes to die")


@pytest.fixture
def private_redis(tmp_path):
    """A Redis server of our own, so stopping it disturbs nobody else."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    def start():
        return subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(tmp_path),
            ],
            stdout=subprocess.DEVNULL,
        )

    if subprocess.run(["which", "redis-server"], capture_output=True).returncode != 0:
        pytest.skip("redis-server is not installed here")
    server = {"process": start(), "url": f"redis://127.0.0.1:{port}/0", "start": start}
    wait_for(
        lambda: subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() == b"PONG",
        timeout=10,
        message="redis to start",
    )
    yield server
    server["process"].terminate()
    server["process"].wait()


def test_a_stopped_broker_is_a_clear_error_without_an_orphan_run_and_recovery_needs_no_restart(
    private_redis, kv_walkthrough_path, maintainer_client, use_broker
):
    from django.urls import reverse

    import_paths([kv_walkthrough_path], library_name="sqlite3")
    walkthrough = Walkthrough.objects.get()
    use_broker(private_redis["url"])
    assert do_start_audit(walkthrough).status == RunStatus.QUEUED
    private_redis["process"].terminate()
    private_redis["process"].wait()
    with pytest.raises(RunNotStarted, match="task queue is not reachable"):
        do_start_audit(walkthrough)
    page = maintainer_client.post(reverse("new_audit", args=[walkthrough.pk]), {"backend": "rules"}, follow=True)
    assert "The task queue is not reachable" in page.content.decode()
    assert Run.objects.count() == 1, "no orphan run"
    private_redis["process"] = private_redis["start"]()
    wait_for(
        lambda: (
            subprocess.run(
                ["redis-cli", "-p", private_redis["url"].split(":")[2].split("/")[0], "ping"], capture_output=True
            ).stdout.strip()
            == b"PONG"
        ),
        timeout=10,
        message="redis back",
    )
    assert wait_for(lambda: _starts(walkthrough), timeout=20, message="runs to start again")
    assert Run.objects.count() == 2


def _starts(walkthrough):
    try:
        return do_start_audit(walkthrough)
    except RunNotStarted:
        return None


def test_the_worker_survives_hostile_steps_and_leaks_no_secrets(make_walkthrough, child_env, tmp_path, workers):
    from django.conf import settings

    APP_DIR = settings.BASE_DIR

    hostile = make_walkthrough(
        [
            ("Secrets", "```bash\nenv\n```\n\nIt prints the environment.", ""),
            ("Fork bomb", "```bash\nbomb() { bomb | bomb & }; bomb\nsleep 2\n```\n\nIt prints nothing.", ""),
            ("Memory", "```bash\npython3 -c 'x = bytearray(8 * 1024**3)'\n```\n\nIt prints nothing.", ""),
            ("Escape", f"```bash\ntouch {APP_DIR}/pwned-by-docs\n```\n\nIt prints nothing.", ""),
            ("Still alive", "```bash\necho alive\n```\n\nIt prints `alive`.", ""),
        ],
        name="wt_hostile",
    )
    import_paths([hostile], library_name="demo")
    walkthrough = Walkthrough.objects.get(walkthrough_id="wt_hostile")
    secrets = {
        "SECRET_KEY": "very-secret-key-123",
        "ANTHROPIC_API_KEY": "sk-ant-secret-456",
        "CELERY_BROKER_URL": child_env.get("CELERY_BROKER_URL", ""),
    }
    from tests.builders import start_worker as start

    worker = start({**child_env, **{k: v for k, v in secrets.items() if v}}, tmp_path / "hostile.log", queues="faults")
    try:
        run = queued_audit(walkthrough)

        def stuck():
            log = fresh(run).output_path() / "agent_logs" / "audit.log"
            log = log.read_text()[-3000:] if log.exists() else "(none)"
            return f"the audit; its log so far:\n{log}\nthe worker's log:\n{worker.log.read_text()[-3000:]}"

        done = wait_for(lambda: fresh(run) if not fresh(run).is_active else None, timeout=120, message=stuck)
        assert done.status == RunStatus.SUCCEEDED and len(done.step_records()) == 5, done.error  # all followed
        assert not (APP_DIR / "pwned-by-docs").exists()
        everything = "".join(p.read_text(errors="replace") for p in done.output_path().rglob("*") if p.is_file())
        assert "alive" in everything
        for name, value in secrets.items():
            if value:
                assert value not in everything, f"{name} leaked into the run's files"
        assert str(child_env["DATABASE_URL"]) not in everything
        again = queued_audit(walkthrough)
        assert wait_for(lambda: not fresh(again).is_active, timeout=120, message="the worker to take the next run")
    finally:
        stop_worker(worker)


class SiteOnPrivatePostgres:
    """Stackbench on a PostgreSQL server of the test's own (which the test stops and starts), with a worker on the
    embedded broker in the test's own var/. Read through plain SQL, so reading works whatever Django thinks."""

    def __init__(self, server, tmp_path, **env):
        self.server, self.tmp_path = server, tmp_path
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "stackbench_site.settings",
            "DATABASE_URL": server["url"],
            "STACKBENCH_VAR": str(tmp_path / "var"),
            **env,
        }
        self.env.pop("CELERY_BROKER_URL", None)
        self.manage("migrate", "--no-input")
        self.worker = None

    def manage(self, *arguments) -> str:
        return subprocess.run(
            [sys.executable, str(BASE_DIR / "manage.py"), *arguments],
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout

    def start_run(self, python):
        """The primary key of the run that a Python snippet (run in `manage.py shell`) starts and prints."""
        return int(self.manage("shell", "-c", python).split()[-1])

    def query(self, sql, *params):
        import psycopg

        try:
            with psycopg.connect(self.server["url"], connect_timeout=2) as db:
                return db.execute(sql, params).fetchall()
        except psycopg.OperationalError:
            return None

    def run_state(self, run_id):
        rows = self.query("select status, attempts, progress_current, error from audits_run where id = %s", run_id)
        return rows[0] if rows else None

    def restart_database(self, down_seconds=3):
        assert as_postgres(self.server["stop"]).returncode == 0
        time.sleep(down_seconds)
        assert as_postgres(self.server["start"]).returncode == 0

    def wait_for_end(self, run_id):
        return wait_for(
            lambda: (state := self.run_state(run_id)) and state[0] not in ("queued", "running") and state,
            timeout=120,
            message=lambda: f"the run to end; worker log:\n{self.worker.log.read_text()[-3000:]}",
        )


@pytest.fixture
def site_on_private_postgres(private_postgres, tmp_path, wheelhouse):
    site = SiteOnPrivatePostgres(
        private_postgres, tmp_path, STACKBENCH_FIND_LINKS=str(wheelhouse), STACKBENCH_NO_INDEX="true"
    )
    site.worker = start_worker(site.env, tmp_path / "worker.log")
    yield site
    stop_worker(site.worker)


def test_a_database_restart_during_an_audit_costs_it_no_attempt(site_on_private_postgres, make_walkthrough):
    site = site_on_private_postgres
    path = make_walkthrough(SLOW_WALKTHROUGH, name="wt_slow")
    run_id = site.start_run(
        "from audits.importing import import_paths; from audits.actions import do_start_audit; "
        "from walkthroughs.models import Walkthrough; "
        f"import_paths([{str(path)!r}], library_name='demo'); "
        "print(do_start_audit(Walkthrough.objects.get(walkthrough_id='wt_slow')).pk)"
    )
    wait_for(
        lambda: (site.run_state(run_id) or ("", 0, 0))[2] >= 2,
        message=lambda: f"the audit to reach its long step: {site.run_state(run_id)}",
    )
    site.restart_database()
    done = site.wait_for_end(run_id)
    assert done[:2] == ("succeeded", 1), done
    assert "the database stopped answering during run" in site.worker.log.read_text()
    gaps = site.query("select seq, step_number, gap_type from audits_gap where run_id = %s order by seq", run_id)
    assert gaps == [(0, 1, "completeness")], "the gaps of the lost attempt are kept once"


def test_a_database_restart_during_a_validation_costs_it_no_attempt(site_on_private_postgres):
    site = site_on_private_postgres
    run_id = site.start_run(
        "from audits.actions import do_start_validation; from walkthroughs.models import DocPage, Library; "
        "from stackbench.formats.walkthrough import ExtractionAnalysis; "
        "library = Library.objects.create(name='sbdemo', default_version='1.0.0'); "
        "code = 'import time\\ntime.sleep(3)\\nprint(1)'; "
        "analysis = ExtractionAnalysis(page='slow.md', library='sbdemo', version='1.0.0', "
        "examples=[{'code': code, 'line': 3 + 10 * i} for i in range(3)]); "
        "page, _ = DocPage.store_analysis(library, analysis, None); "
        "print(do_start_validation(library, [page]).pk)"
    )
    results = "select example_index, status from audits_exampleresult r join audits_validationdocument d "
    results += "on r.document_id = d.id where d.run_id = %s order by example_index"
    wait_for(lambda: site.query(results, run_id), message="the first example's result")
    site.restart_database()
    done = site.wait_for_end(run_id)
    assert done[:2] == ("succeeded", 1), done
    assert "the database stopped answering during run" in site.worker.log.read_text()
    assert site.query(results, run_id) == [(0, "success"), (1, "success"), (2, "success")]


def test_a_run_queued_when_redis_restarts_is_sent_again_and_costs_no_attempt(
    private_redis, slow_walkthrough, use_broker, child_env, tmp_path, wheelhouse
):
    from audits.tasks import resend_lost_messages

    use_broker(private_redis["url"])
    run = do_start_audit(slow_walkthrough)
    private_redis["process"].terminate()
    private_redis["process"].wait()
    private_redis["process"] = private_redis["start"]()
    port = private_redis["url"].split(":")[2].split("/")[0]
    wait_for(
        lambda: subprocess.run(["redis-cli", "-p", port, "ping"], capture_output=True).stdout.strip() == b"PONG",
        timeout=10,
        message="redis back",
    )
    env = {
        **child_env,
        "CELERY_BROKER_URL": private_redis["url"],
        "STACKBENCH_FIND_LINKS": str(wheelhouse),
        "STACKBENCH_NO_INDEX": "true",
    }
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        time.sleep(2)
        assert fresh(run).status == RunStatus.QUEUED, "Redis kept nothing: no worker can take it"
        assert resend_lost_messages(seconds=0) == [(run.pk, "resent")]
        done = wait_for(lambda: fresh(run) if not fresh(run).is_active else None, timeout=90, message="the run")
        assert (done.status, done.attempts) == (RunStatus.SUCCEEDED, 1), done.error
    finally:
        stop_worker(worker)
