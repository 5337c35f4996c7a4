"""`stackbench up`: everything a newcomer needs in one process tree: migrations, sample data, an admin login,
the web server (gunicorn) and a Celery worker. Ctrl-C stops both."""

import secrets
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

ADMIN_USERNAME = "admin"


def worker_command(concurrency: int, queues: str = "celery", beat: bool = False) -> list[str]:
    """A Celery worker; with beat, it also runs the periodic recovery of runs whose worker died (one worker of a
    deployment should)."""
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "stackbench_site",
        "worker",
        "--loglevel",
        "INFO",
        "--concurrency",
        str(concurrency),
        "--queues",
        queues,
        "--hostname",
        f"stackbench-{secrets.token_hex(3)}@%h",
    ]
    if beat:
        command += ["--beat", "--schedule", str(settings.VAR_DIR / "celerybeat-schedule")]
    return command


def beat_command() -> list[str]:
    """The schedule of the periodic recovery, as a process of its own so `up` sees it die and starts it again (a
    beat embedded in a worker dies silently)."""
    schedule = str(settings.VAR_DIR / "celerybeat-schedule")
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "stackbench_site",
        "beat",
        "--loglevel",
        "INFO",
        "--schedule",
        schedule,
    ]


def web_command(host: str, port: int) -> list[str]:
    # One process more than cores keeps both busy while a request waits on the database; threads absorb the
    # rest. Keep-alive outlasts a person's pause between clicks, so connections are not closed under them.
    workers = settings.STACKBENCH_WEB_PROCESSES
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "stackbench_site.wsgi:application",
        "--bind",
        f"{host}:{port}",
        "--workers",
        str(workers),
        "--threads",
        "4",
        "--timeout",
        "60",
        "--keep-alive",
        "5",
        "--access-logfile",
        "-",
    ]


def ensure_admin() -> str:
    """Create the admin user once with a generated password kept in var/ (readable only by its owner)."""
    password_file = settings.VAR_DIR / "admin_password.txt"
    users = get_user_model().objects
    if not users.filter(username=ADMIN_USERNAME).exists():
        password = secrets.token_urlsafe(12)
        users.create_superuser(ADMIN_USERNAME, "admin@localhost", password)
        password_file.write_text(password + "\n")
        password_file.chmod(0o600)
    if password_file.exists():
        return password_file.read_text().strip()
    return "(set earlier; reset it with: .venv/bin/python manage.py changepassword admin)"


def load_sample_data() -> bool:
    """Import the sample walkthrough and doc pages once. True when they were new."""
    from audits.importing import import_paths
    from walkthroughs.models import Walkthrough

    if Walkthrough.objects.filter(walkthrough_id="wt_kv_quickstart").exists():
        return False
    sample = settings.SHARED_FIXTURES_DIR
    import_paths([sample / "walkthroughs" / "wt_kv_quickstart.json"], library_name="sqlite3")
    import_paths([sample / "extraction"])
    return True


def present_sample_walkthrough():
    """Build the sample repository the Symposium walkthrough talks about, and present it."""
    from walkthroughs.models import PresentedWalkthrough

    repo = settings.VAR_DIR / "repos" / "symposium-demo"
    if not repo.exists():
        repo.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["bash", str(settings.SHARED_FIXTURES_DIR / "symposium" / "make_repo.sh"), str(repo)],
            check=True,
            capture_output=True,
            timeout=60,
        )
    source = (settings.SHARED_FIXTURES_DIR / "symposium" / "review.walkthrough.json").read_text()
    PresentedWalkthrough.present(source, str(repo))


def queue_sample_runs():
    from audits.actions import do_start_audit, do_start_validation
    from walkthroughs.models import Library, Walkthrough

    walkthrough = Walkthrough.objects.get(walkthrough_id="wt_kv_quickstart")
    do_start_audit(walkthrough, user=None, origin="sample")
    for library in Library.objects.filter(doc_pages__isnull=False).distinct():
        do_start_validation(library, list(library.doc_pages.all()), user=None, origin="sample")


def _stop(signum, frame):
    # SIGTERM ends `up` like Ctrl-C, so the web app and the worker are stopped too.
    raise KeyboardInterrupt


def run_everything(host: str, port: int, workers: int, sample_data: bool) -> int:
    call_command("migrate", interactive=False, verbosity=0)
    password = ensure_admin()
    if sample_data and load_sample_data():
        present_sample_walkthrough()
        queue_sample_runs()
    # The web app ends `up` when it stops; the worker and the recovery schedule are started again when they die.
    commands = {"web": web_command(host, port), "worker": worker_command(workers), "beat": beat_command()}
    processes = {name: subprocess.Popen(command) for name, command in commands.items()}
    signal.signal(signal.SIGTERM, _stop)
    url = f"http://{host}:{port}/"
    print(
        f"\n  Stackbench is running at {url}\n  Log in as {ADMIN_USERNAME} / {password}\n"
        f"  (password kept in {settings.VAR_DIR / 'admin_password.txt'}). Ctrl-C stops the web app and the worker.\n",
        flush=True,
    )
    try:
        while processes["web"].poll() is None:
            for name in ("worker", "beat"):
                if processes[name].poll() is not None:
                    print(f"  The {name} stopped (exit {processes[name].returncode}); starting it again.", flush=True)
                    processes[name] = subprocess.Popen(commands[name])
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for child in processes.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in processes.values():
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
    web = processes["web"].returncode
    return 0 if web in (0, -signal.SIGTERM, None) else 1
