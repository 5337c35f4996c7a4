"""The database restarting under a running dashboard: requests in between get a clean 503, and the dashboard
recovers by itself when the database is back. Uses a PostgreSQL server of its own (initdb), so stopping it
disturbs nothing else."""

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import pytest

from tests.builders import BASE_DIR, wait_for

pytestmark = pytest.mark.slow

PG_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_postgres(command):
    return subprocess.run(
        ["runuser", "-u", "postgres", "--"] + command, cwd="/tmp", capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def private_postgres():
    if not PG_BIN or os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("needs PostgreSQL's server binaries and root (to run them as the postgres user)")
    # pytest's tmp_path sits in a root-only directory the postgres user cannot enter.
    home = tempfile.mkdtemp(prefix="stackbench-pg-")
    os.chmod(home, 0o755)
    shutil.chown(home, "postgres")
    bin_dir, data, port = PG_BIN[-1], f"{home}/data", free_port()
    control = {
        "start": [f"{bin_dir}/pg_ctl", "-D", data, "-o", f"-p {port} -k {home}", "-l", f"{home}/pg.log", "-w", "start"],
        "stop": [f"{bin_dir}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"],
    }
    try:
        for command in (
            [f"{bin_dir}/initdb", "-D", data, "-A", "trust", "-U", "postgres"],
            control["start"],
            [f"{bin_dir}/createdb", "-h", "127.0.0.1", "-p", str(port), "stackbench"],
        ):
            finished = as_postgres(command)
            assert finished.returncode == 0, f"{command[0]} failed: {finished.stderr}"
        yield {"url": f"postgres://postgres@127.0.0.1:{port}/stackbench", **control}
    finally:
        as_postgres(control["stop"])
        shutil.rmtree(home, ignore_errors=True)


def get(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_requests_fail_cleanly_while_the_database_restarts_and_recover_after(private_postgres, tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": private_postgres["url"],
        "STACKBENCH_VAR": str(tmp_path / "var"),
        "DJANGO_SETTINGS_MODULE": "stackbench_site.settings",
    }
    manage = [sys.executable, str(BASE_DIR / "manage.py")]
    subprocess.run(manage + ["migrate", "--no-input"], env=env, check=True, capture_output=True)
    subprocess.run(
        [sys.executable, "-m", "stackbench_site.cli", "user", "ops", "--role", "viewer"],
        env=env,
        check=True,
        capture_output=True,
    )
    token = subprocess.run(
        [sys.executable, "-m", "stackbench_site.cli", "token", "--user", "ops"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    port = free_port()
    web = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "stackbench_site.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            "--threads",
            "2",
        ],
        env=env,
        cwd=str(BASE_DIR),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}/api/v1/runs/"
    try:
        wait_for(lambda: _answers(base, token) == 200, timeout=30, message="the dashboard to serve")
        assert as_postgres(private_postgres["stop"]).returncode == 0
        status, body = get(base, token)
        assert status == 503 and "database is not answering" in body
        assert as_postgres(private_postgres["start"]).returncode == 0
        assert wait_for(lambda: _answers(base, token) == 200, timeout=30, message="the dashboard to recover")
    finally:
        os.killpg(web.pid, 15)
        web.wait(timeout=20)


def _answers(url, token):
    try:
        return get(url, token)[0]
    except (urllib.error.URLError, ConnectionError, OSError):
        return None
