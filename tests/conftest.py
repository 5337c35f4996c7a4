import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

BASE_DIR = Path(__file__).resolve().parent.parent
SAMPLE_DIR = BASE_DIR / "sample_data"

# Fuzz tests share one database transaction per test; no example database is written into the checkout.
settings.register_profile("stackbench", database=None, deadline=None, max_examples=120, print_blob=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                 HealthCheck.data_too_large, HealthCheck.large_base_example])
settings.load_profile("stackbench")


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


def walkthrough_export(steps, title="A small tutorial", description="", first_order=0):
    """A walkthrough export in the exact shape of formats.md; steps are (title, contentForUser, operations)."""
    return {
        "version": "1.0",
        "exportedAt": "2026-11-01T00:00:00Z",
        "walkthrough": {"title": title, "description": description, "type": "quickstart", "status": "published",
                        "createdAt": 1763000000000, "updatedAt": 1763000000000, "estimatedDurationMinutes": 5,
                        "tags": [], "metadata": None},
        "steps": [
            {"title": step_title, "displayOrder": first_order + i, "createdAt": 1763000000000,
             "updatedAt": 1763000000000, "metadata": None,
             "nextStepReference": first_order + i + 1 if i + 1 < len(steps) else None,
             "contentFields": {"version": "v1", "contentForUser": content, "contextForAgent": "",
                               "operationsForAgent": operations, "introductionForAgent": f"This step: {step_title}."}}
            for i, (step_title, content, operations) in enumerate(steps)
        ],
        "metadata": {"originalDocPath": "docs/tutorial.md", "generatedBy": "test"},
    }


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


def start_worker(env, log, queues="celery", concurrency=2):
    """A real Celery worker process in its own process group; returns once it is ready."""
    import subprocess
    import sys
    import time
    import uuid

    name = f"test-{uuid.uuid4().hex[:6]}@%h"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "stackbench_site", "worker", "--loglevel", "INFO",
             "--concurrency", str(concurrency), "--hostname", name, "--queues", queues, "--without-mingle",
             "--without-gossip"],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=str(BASE_DIR), start_new_session=True)
    deadline = time.monotonic() + 60
    while "ready." not in log.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the test worker did not start:\n{log.read_text()}")
        time.sleep(0.2)
    process.log = log
    return process


def stop_worker(process):
    import os
    import signal
    import subprocess

    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def celery_worker(child_env, tmp_path_factory):
    """A real Celery worker process consuming from the configured broker (filesystem or Redis)."""
    from stackbench_site.celery import app

    app.control.purge()
    process = start_worker(child_env, tmp_path_factory.mktemp("worker") / "worker.log")
    yield process
    stop_worker(process)


@pytest.fixture
def pids_cgroup(tmp_path):
    """For tests that start a fork bomb: without a pids cgroup nothing would contain it but the whole machine."""
    from audits.sandbox import Limits, ProcessJail

    probe = ProcessJail(Limits(), tmp_path / "probe")
    jailed = probe.cgroup is not None
    probe.close()
    if not jailed:
        pytest.skip("needs a pids cgroup to contain a fork bomb")


def wait_for(predicate, timeout=60, interval=0.2, message="condition"):
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {message() if callable(message) else message}")


DEMO_PACKAGE = '''"""A tiny package for offline validation tests."""
import warnings


def greet(name):
    return f"hello {name}"


def explode(value):
    return _check(value)


def _check(value):
    raise ValueError(f"bad value: {value}")


def old_greet(name):
    warnings.warn("old_greet is deprecated; use greet", DeprecationWarning, stacklevel=2)
    return greet(name)
'''


def build_wheel(folder, name, version, module_source):
    """A real wheel, built by hand (a wheel is a zip with its metadata), so tests install offline."""
    import base64
    import hashlib
    import zipfile

    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": module_source,
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: stackbench-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    records = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        records.append(f"{path},sha256={digest},{len(text.encode())}")
    records.append(f"{dist}/RECORD,,")
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(f"{dist}/RECORD", "\n".join(records) + "\n")
    return wheel


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wheelhouse")
    build_wheel(folder, "sbdemo", "1.0.0", DEMO_PACKAGE)
    build_wheel(folder, "sbdemo", "2.0.0", DEMO_PACKAGE + "\n\ndef shout(name):\n    return greet(name).upper()\n")
    return folder


def make_user(username, *permissions, superuser=False):
    from django.contrib.auth.models import Permission, User

    user = User.objects.create_user(username, f"{username}@example.com", "pw-" + username)
    user.is_superuser = superuser
    user.is_staff = superuser
    user.save()
    for codename in permissions:
        app_label, name = codename.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=name))
    return user


@pytest.fixture
def maintainer(db):
    return make_user("maintainer", "audits.start_run", "walkthroughs.manage_library", "audits.share_run")


@pytest.fixture
def viewer(db):
    return make_user("viewer")


def logged_in(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def maintainer_client(maintainer):
    return logged_in(maintainer)


@pytest.fixture
def viewer_client(viewer):
    return logged_in(viewer)


def audit_result(walkthrough_id="wt_kv_quickstart", started="2026-11-01T10:00:00Z", gaps=(), library="sqlite3",
                 total=5, completed=5):
    """An audit result as the existing tool chain writes it; gaps are (step, title, type, severity, description)."""
    from audits.formats import AuditResult
    from walkthroughs.formats import Gap

    return AuditResult(
        walkthrough_id=walkthrough_id, walkthrough_title="A key-value store with sqlite3", library_name=library,
        library_version="3.40", started_at=started, completed_at=started, duration_seconds=3.5, total_steps=total,
        completed_steps=completed, gaps=[Gap(step_number=s, step_title=t, gap_type=g, severity=v, description=d,
                                             timestamp=started) for s, t, g, v, d in gaps])


@pytest.fixture
def import_audit(tmp_path):
    """Store an audit run the way an import does (fast, deterministic)."""
    from audits.importing import import_paths
    from audits.models import Run
    from stackbench_site.jsonfiles import write_model

    counter = {"n": 0}

    def store(**kwargs):
        counter["n"] += 1
        folder = tmp_path / f"audit-{counter['n']}"
        folder.mkdir()
        result = audit_result(**kwargs)
        write_model(folder / f"{result.walkthrough_id}_audit.json", result)
        outcome, = import_paths([folder])
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
