"""What tests build their material with: walkthrough exports, audit requests and results, wheels, users, worker
processes, and the CLI. One module, so every test builds the same things the same way."""

import base64
import ctypes
import glob
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from stackbench.auditing.common import AuditRequest
from stackbench.formats.results import AuditResult, ValidationResult, ValidationSummary
from stackbench.formats.walkthrough import Gap, Session
from stackbench_site.configuration import sandbox_settings
from stackbench_site.launcher import worker_command

BASE_DIR = Path(__file__).resolve().parent.parent
SAMPLE_DIR = BASE_DIR / "sample_data"
# The Symposium walkthrough of the sample data, using every element and location kind.
REVIEW = json.loads((SAMPLE_DIR / "symposium" / "review.walkthrough.json").read_text())
# Two gaps of the sample walkthrough, as an import stores them (step, title, type, severity, description).
# Two sightings of one problem (a file never created), as the existing tools report them.
SEED_GAPS = [
    (3 + i, "Load the seed data", "logical_flow", "critical", f"seed.csv is never created ({i})") for i in range(2)
]
KV_GAPS = [
    (3, "Load the seed data", "logical_flow", "critical", "`seed.csv` is used here, but no earlier step creates it."),
    (4, "Tune the database", "clarity", "warning", "No concrete instruction."),
]


def audit_request(walkthrough_path, output_dir, library_name="", library_version="", **fields):
    """An audit request with the sandbox the app would use (the reader's machine, the app's folders hidden)."""
    fields.setdefault("sandbox", sandbox_settings())
    return AuditRequest(Path(walkthrough_path), Path(output_dir), library_name, library_version, **fields)


def stackbench(*args, env=None, cwd=None):
    """The `stackbench` command in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "stackbench_site.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd or BASE_DIR,
        env=env,
        timeout=120,
    )


def count_queries(client, url):
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def validation_doc(page, statuses):
    """A validation result of toolz examples with the given statuses (failures are errors)."""
    return ValidationResult(
        page=page,
        library="toolz",
        version="0.12.1",
        validation_timestamp="2026-11-01T10:00:00Z",
        results=[
            {
                "example_index": i,
                "status": s,
                "severity": "error" if s == "failure" else None,
                "code": f"x{i}",
                "line": 5 + i,
            }
            for i, s in enumerate(statuses)
        ],
    )


def walkthrough_export(steps, title="A small tutorial", description="", first_order=0):
    """A walkthrough export in the exact shape of formats.md; steps are (title, contentForUser, operations)."""
    return {
        "version": "1.0",
        "exportedAt": "2026-11-01T00:00:00Z",
        "walkthrough": {
            "title": title,
            "description": description,
            "type": "quickstart",
            "status": "published",
            "createdAt": 1763000000000,
            "updatedAt": 1763000000000,
            "estimatedDurationMinutes": 5,
            "tags": [],
            "metadata": None,
        },
        "steps": [
            {
                "title": step_title,
                "displayOrder": first_order + i,
                "createdAt": 1763000000000,
                "updatedAt": 1763000000000,
                "metadata": None,
                "nextStepReference": first_order + i + 1 if i + 1 < len(steps) else None,
                "contentFields": {
                    "version": "v1",
                    "contentForUser": content,
                    "contextForAgent": "",
                    "operationsForAgent": operations,
                    "introductionForAgent": f"This step: {step_title}.",
                },
            }
            for i, (step_title, content, operations) in enumerate(steps)
        ],
        "metadata": {"originalDocPath": "docs/tutorial.md", "generatedBy": "test"},
    }


def dies_with_the_test_run():
    """For Popen's preexec_fn: the kernel kills the child when the test process ends, even by SIGKILL, so a worker
    left by an interrupted run never takes tasks from a later run's queue (PR_SET_PDEATHSIG is prctl option 1)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)


def start_worker(env, log, queues="celery", concurrency=2):
    """A real Celery worker process in its own process group, ended with the test run; returns once it is ready."""
    with open(log, "w") as out:
        process = subprocess.Popen(
            [*worker_command(concurrency, queues), "--without-mingle", "--without-gossip"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=str(BASE_DIR),
            start_new_session=True,
            preexec_fn=dies_with_the_test_run,
        )
    deadline = time.monotonic() + 60
    while "ready." not in log.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            stop_worker(process)  # one that is slow to start must not take a later test's tasks
            raise RuntimeError(f"the test worker did not start:\n{log.read_text()}")
        time.sleep(0.2)
    process.log = log
    return process


def stop_worker(process):
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


def wait_for(predicate, timeout=60, interval=0.2, message="condition"):
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
    raise ValueError(f"bad value: {value!r}")


def old_greet(name):
    warnings.warn("old_greet is deprecated; use greet", DeprecationWarning, stacklevel=2)
    return greet(name)


def fancy_greet(name):
    import sbfancy  # an optional dependency: the "fancy" extra

    return sbfancy.decorate(greet(name))


class GreetingRefused(Exception):
    """What a greeting hook raises to stop the greeting."""


class Container:
    """Greetings kept for later (a name `typing` exports too)."""
'''


DEPLOY_PACKAGE = '''"""A tiny tool whose command runs the reader's deploy files, with `host` set up for them."""
import runpy
import sys


class Host:
    def __init__(self, name):
        self.name = name

    def fact(self, name):
        return f"{name} of {self.name}"


host = Host  # the command puts the host it runs the file against here


def deploy(text):
    print(f"deploy {text}")


def main():
    global host
    host = Host(sys.argv[1])
    for path in sys.argv[2:]:
        runpy.run_path(path)
'''


def build_wheel(
    folder,
    name,
    version,
    module_source,
    requires=(),
    python_requires="",
    module=None,
    console_scripts=(),
    submodules=None,
):
    """A real wheel, built by hand (a wheel is a zip with its metadata), so tests install offline. requires are
    Requires-Dist lines (`other; extra == "fancy"`); without module_source, a wheel that only gathers its
    requirements (a meta package); module: the package it installs, when not named like the distribution;
    console_scripts are `command = module:function` lines; submodules: name -> source of the package's other modules."""
    dist = f"{name}-{version}.dist-info"
    requirements = "".join(f"Requires-Dist: {line}\n" for line in requires)
    extras = "".join(
        f"Provides-Extra: {extra}\n"
        for extra in sorted({line.split("extra ==")[1].strip(" '\"") for line in requires if "extra ==" in line})
    )
    files = {
        **({f"{module or name}/__init__.py": module_source} if module_source is not None else {}),
        **{f"{module or name}/{sub}.py": source for sub, source in (submodules or {}).items()},
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{extras}{requirements}"
        + (f"Requires-Python: {python_requires}\n" if python_requires else ""),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: stackbench-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        **(
            {f"{dist}/entry_points.txt": "[console_scripts]\n" + "".join(f"{line}\n" for line in console_scripts)}
            if console_scripts
            else {}
        ),
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


def make_user(username, *permissions, superuser=False):
    user = User.objects.create_user(username, f"{username}@example.com", "pw-" + username)
    user.is_superuser = superuser
    user.is_staff = superuser
    user.save()
    for codename in permissions:
        app_label, name = codename.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=name))
    return user


def logged_in(user):
    client = Client()
    client.force_login(user)
    return client


def audit_result(
    walkthrough_id="wt_kv_quickstart",
    started="2026-11-01T10:00:00Z",
    gaps=(),
    library="sqlite3",
    total=5,
    completed=5,
    execution_log="",
):
    """An audit result as the existing tool chain writes it; gaps are (step, title, type, severity, description)."""
    return AuditResult(
        walkthrough_id=walkthrough_id,
        walkthrough_title="A key-value store with sqlite3",
        library_name=library,
        library_version="3.40",
        started_at=started,
        completed_at=started,
        duration_seconds=3.5,
        total_steps=total,
        completed_steps=completed,
        gaps=[
            Gap(step_number=s, step_title=t, gap_type=g, severity=v, description=d, timestamp=started)
            for s, t, g, v, d in gaps
        ],
        execution_log=execution_log,
    )


def seed_documents():
    """One file of each format the importer reads, as dictionaries (for fuzzing from real shapes)."""
    session = Session(
        walkthrough_path="wt_kv_quickstart.json",
        current_step=2,
        total_steps=5,
        completed_steps=2,
        session_started="2026-11-01T10:00:00Z",
    )
    docs = [validation_doc("a.md", ["success", "failure"])]
    return [
        json.loads((SAMPLE_DIR / "walkthroughs" / "wt_kv_quickstart.json").read_text()),
        json.loads((SAMPLE_DIR / "extraction" / "toolz_intro_analysis.json").read_text()),
        audit_result(gaps=SEED_GAPS).model_dump(mode="json"),
        session.model_dump(mode="json"),
        docs[0].model_dump(mode="json"),
        ValidationSummary(timestamp="2026-11-01T10:01:00Z", documents=docs).model_dump(mode="json"),
    ]


def processes_of(uid: int) -> list[int]:
    """Host pids of the live processes running as uid (a sandbox's own uid, when the worker is root)."""
    return _live_processes(lambda found: found == uid)


def sandbox_processes() -> list[int]:
    """Host pids of the live processes running as any sandbox's own uid (when the worker is root)."""
    from stackbench.sandbox.venv_copies import SANDBOX_UIDS

    return _live_processes(lambda uid: SANDBOX_UIDS[0] <= uid < SANDBOX_UIDS[1])


def _live_processes(uid_matches) -> list[int]:
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if uid_matches(int(fields["Uid"].split()[1])) and not fields["State"].strip().startswith("Z"):
            found.append(int(status.parent.name))
    return found


PG_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_postgres(command):
    return subprocess.run(
        ["runuser", "-u", "postgres", "--"] + command, cwd="/tmp", capture_output=True, text=True, timeout=60
    )


def private_postgres_server():
    """A PostgreSQL server of our own (initdb), so stopping it disturbs nothing else: yields its URL and the
    commands that start and stop it. None where its binaries or root are missing."""
    if not PG_BIN or os.geteuid() != 0 or not shutil.which("runuser"):
        return None
    # pytest's tmp_path sits in a root-only directory the postgres user cannot enter.
    home = tempfile.mkdtemp(prefix="stackbench-pg-")
    os.chmod(home, 0o755)
    shutil.chown(home, "postgres")
    bin_dir, data, port = PG_BIN[-1], f"{home}/data", free_port()
    control = {
        "start": [f"{bin_dir}/pg_ctl", "-D", data, "-o", f"-p {port} -k {home}", "-l", f"{home}/pg.log", "-w", "start"],
        "stop": [f"{bin_dir}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"],
        "home": home,
    }
    for command in (
        [f"{bin_dir}/initdb", "-D", data, "-A", "trust", "-U", "postgres"],
        control["start"],
        [f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(port), "stackbench"],
    ):
        finished = as_postgres(command)
        assert finished.returncode == 0, f"{command[0]} failed: {finished.stderr}"
    return {"url": f"postgres://postgres@127.0.0.1:{port}/stackbench", **control}
