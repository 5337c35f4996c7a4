import json
import os

import pytest
from hypothesis import HealthCheck, settings

from tests.builders import (
    DEMO_PACKAGE,
    DEPLOY_PACKAGE,
    SAMPLE_DIR,
    as_postgres,
    audit_result,
    build_wheel,
    logged_in,
    make_user,
    private_postgres_server,
    start_worker,
    stop_worker,
    walkthrough_export,
)

# Fuzz tests share one database transaction per test; no example database is written into the checkout.
settings.register_profile(
    "stackbench",
    database=None,
    deadline=None,
    max_examples=120,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)
settings.load_profile("stackbench")


def _flush_again_after_a_deadlock():
    """The session's Celery worker may hold a row lock (its periodic recovery of stalled runs) while a test's
    PostgreSQL database is emptied: PostgreSQL breaks that deadlock by failing the TRUNCATE, whose transaction
    rolls back whole, so emptying it again is safe and then succeeds."""
    from django.core.management.base import CommandError
    from django.db import OperationalError
    from django.test import TransactionTestCase

    teardown = TransactionTestCase._fixture_teardown

    def patient_teardown(self):
        for attempt in range(3):
            try:
                return teardown(self)
            except CommandError as exc:  # flush's wrapping of the database's error
                deadlock = isinstance(exc.__cause__, OperationalError) and "deadlock detected" in str(exc.__cause__)
                if attempt == 2 or not deadlock:
                    raise

    TransactionTestCase._fixture_teardown = patient_teardown


_flush_again_after_a_deadlock()


# Engines import no Django and no Celery (import-linter checks it), so the database and broker of a pass cannot
# change their outcome: the second pass of bin/test (PostgreSQL + Redis) leaves them to the first. The Claude tests
# stay in both: some of them store runs.
ENGINE_FOLDERS = ("tests/stackbench/",)
BOTH_PASSES = ("tests/stackbench/auditing/test_claude.py",)


def pytest_ignore_collect(collection_path, config):
    if os.environ.get("STACKBENCH_TEST_PASS") != "servers" or not collection_path.is_file():
        return None
    relative = collection_path.as_posix().split("/tests/", 1)[-1]
    relative = "tests/" + relative
    if relative.startswith(ENGINE_FOLDERS) and relative not in BOTH_PASSES:
        return True
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Browser tests last: Playwright's sync API keeps an event loop in the main thread while it runs, which
    other tests (asyncio.run) cannot share."""
    browser = [item for item in items if "tests/browser/" in str(item.fspath)]
    for item in browser:
        item.add_marker(pytest.mark.browser)
    items[:] = [item for item in items if item not in browser] + browser


@pytest.fixture
def sample_dir():
    return SAMPLE_DIR


@pytest.fixture
def kv_walkthrough_path():
    return SAMPLE_DIR / "walkthroughs" / "wt_kv_quickstart.json"


@pytest.fixture
def write_json(tmp_path):
    def write(name, data):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)
        return path

    return write


@pytest.fixture
def make_walkthrough(tmp_path):
    def make(steps, name="wt_test", **kwargs):
        folder = tmp_path / "walkthroughs"
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.json"
        path.write_text(json.dumps(walkthrough_export(steps, **kwargs), indent=2))
        return path

    return make


def _database_url_for_children():
    """The test database as a URL, so worker processes started by tests use it too."""
    from django.db import connection

    params = connection.settings_dict
    if params["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{params['NAME']}"
    auth = params["USER"] + (f":{params['PASSWORD']}" if params.get("PASSWORD") else "")
    return f"postgres://{auth}@{params['HOST'] or '127.0.0.1'}:{params['PORT'] or 5432}/{params['NAME']}"


@pytest.fixture(scope="session")
def child_env(django_db_setup):
    import os

    return {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": _database_url_for_children()}


@pytest.fixture(scope="session")
def celery_worker(child_env, tmp_path_factory):
    """A real Celery worker process consuming from the configured broker (filesystem or Redis)."""
    from stackbench_site.celery import app

    app.control.purge()
    process = start_worker(child_env, tmp_path_factory.mktemp("worker") / "worker.log")
    yield process
    stop_worker(process)


@pytest.fixture
def make_sandbox():
    """Sandboxes as the app makes them (the machine's reader profile, the app's folders hidden), closed after the
    test; keyword arguments are limits (timeout=5, max_processes=64, ...) and reachable_hosts."""
    import dataclasses

    from stackbench.sandbox.sandbox import open_sandbox
    from stackbench_site.configuration import sandbox_settings

    made = []

    def make(label="test", work_dir=None, read_only=None, reachable_hosts=None, **limits):
        settings = sandbox_settings(**limits)
        if reachable_hosts is not None:
            settings = dataclasses.replace(settings, reachable_hosts=reachable_hosts)
        sandbox = open_sandbox(settings, label, work_dir, read_only)
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()


@pytest.fixture
def root_worker():
    if os.geteuid() != 0:
        pytest.skip("checks what a step can do against a worker that runs as root")


@pytest.fixture
def root_only(tmp_path_factory, root_worker):
    """A folder only root may enter, holding a file only root may read (as var/, /root or /etc/shadow are): what a
    worker running as root must never read, write or copy out for a run."""
    folder = tmp_path_factory.mktemp("root-only")
    folder.chmod(0o700)
    secret = folder / "secret.txt"
    secret.write_text("ROOT-ONLY-SECRET-7f3a")
    secret.chmod(0o600)
    return folder, secret


@pytest.fixture
def pids_cgroup():
    """For tests that start a fork bomb: without a pids cgroup counting refused forks, a flood is only capped."""
    from stackbench.sandbox.cgroups import Cgroups

    probe = Cgroups.create(64, 2**30)
    has_pids = probe.pids is not None
    probe.remove_when_empty()
    if not has_pids:
        pytest.skip("needs a pids cgroup to see a fork bomb reach the limit")


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wheelhouse")
    build_wheel(folder, "sbdemo", "1.0.0", DEMO_PACKAGE, requires=['sbfancy; extra == "fancy"'])
    build_wheel(folder, "sbfancy", "1.0.0", "def decorate(text):\n    return f'*{text}*'\n")
    build_wheel(folder, "sbplain", "1.0.0", "VALUE = 'plain'\n")  # a package of its own, no extra of sbdemo's
    build_wheel(folder, "sb_kit", "1.0.0", "VALUE = 'kit'\n", module="sbkitmod")  # imported by another name
    build_wheel(folder, "sbdemo", "3.0.0", DEMO_PACKAGE, python_requires=">=3.99")
    build_wheel(folder, "sbdemo", "1.1.0", DEMO_PACKAGE, python_requires=">=3.9")
    build_wheel(folder, "sbdemo", "2.0.0", DEMO_PACKAGE + "\n\ndef shout(name):\n    return greet(name).upper()\n")
    build_wheel(folder, "sbdeploy", "1.0.0", DEPLOY_PACKAGE, console_scripts=["sbdeploy = sbdeploy:main"])
    return folder


@pytest.fixture
def maintainer(db):
    return make_user("maintainer", "audits.start_run", "walkthroughs.manage_library", "audits.share_run")


@pytest.fixture
def viewer(db):
    return make_user("viewer")


@pytest.fixture
def maintainer_client(maintainer):
    return logged_in(maintainer)


@pytest.fixture
def viewer_client(viewer):
    return logged_in(viewer)


@pytest.fixture
def import_audit(tmp_path):
    """Store an audit run the way an import does (fast, deterministic)."""
    from audits.importing import import_paths
    from audits.models import Run
    from stackbench.lib.jsonfiles import write_model

    counter = {"n": 0}

    def store(**kwargs):
        counter["n"] += 1
        folder = tmp_path / f"audit-{counter['n']}"
        folder.mkdir()
        result = audit_result(**kwargs)
        write_model(folder / f"{result.walkthrough_id}_audit.json", result)
        (outcome,) = import_paths([folder])
        assert outcome.status == "created", outcome.message
        return Run.objects.get(pk=int(outcome.url.rstrip("/").rsplit("/", 1)[-1]))

    return store


@pytest.fixture(scope="session")
def symposium_repo(tmp_path_factory):
    """The repository the Symposium fixture walkthrough talks about, built by the fixture's own script."""
    import subprocess

    repo = tmp_path_factory.mktemp("symposium") / "repo"
    subprocess.run(["bash", str(SAMPLE_DIR / "symposium" / "make_repo.sh"), str(repo)], check=True, capture_output=True)
    return repo


@pytest.fixture
def review_walkthrough():
    return (SAMPLE_DIR / "symposium" / "review.walkthrough.json").read_text()


@pytest.fixture
def use_broker():
    """Point this process's Celery app at another broker for sending; the original one is back after the test."""
    from kombu import pools

    from stackbench_site.celery import app

    def use(url):
        # Celery's broker_url prefers the CELERY_BROKER_URL environment variable (which worker processes
        # must keep); broker_write_url, which sending uses, is read from the configuration.
        app.conf.broker_write_url = url
        pools.reset()
        app._pool = None
        app.amqp._producer_pool = None

    yield use
    use(None)


@pytest.fixture
def private_postgres():
    """A PostgreSQL server of the test's own, which it may stop and start."""
    import shutil

    server = private_postgres_server()
    if server is None:
        pytest.skip("needs PostgreSQL's server binaries and root (to run them as the postgres user)")
    try:
        yield server
    finally:
        as_postgres(server["stop"])
        shutil.rmtree(server["home"], ignore_errors=True)
