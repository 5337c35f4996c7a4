"""The database restarting under a running dashboard: requests in between get a clean 503, and the dashboard
recovers by itself when the database is back. Uses a PostgreSQL server of its own (initdb), so stopping it
disturbs nothing else."""

import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tests.builders import BASE_DIR, as_postgres, dies_with_the_test_run, free_port, wait_for

pytestmark = pytest.mark.slow


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
        preexec_fn=dies_with_the_test_run,
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
