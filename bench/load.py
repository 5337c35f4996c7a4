"""Load: the dashboard under gunicorn (the same command `stackbench up` runs) on PostgreSQL and Redis, with a Celery
worker executing two audit runs, while simulated people browse, filter, open runs, watch a live run and triage.

    .venv/bin/python bench/load.py [--users 50] [--seconds 60] [--think 0.5 2.0]

Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust) and Redis at 127.0.0.1:6379, or PG_URL / REDIS_URL.
Uses a database of its own (stackbench_load, recreated) and Redis database 13 (flushed). Seeds 50 walkthroughs,
500 runs, 100,000 gaps and 50 problems. Reports requests/s, p50/p95/p99 latency and errors, overall and per
action. Target: zero errors, p95 under 300 ms on 2 cores. The load generator runs on the same machine."""

import argparse
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import psycopg
import redis
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PG_URL = os.environ.get("PG_URL", "postgres://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/13")
PASSWORD = "load-pw"
TYPES = ["clarity", "prerequisite", "logical_flow", "execution_error", "completeness", "cross_reference"]

# A doc whose commands take a while, as real installs and scripts do: mostly waiting, with bursts of CPU.
SLOW_STEP = 'Run it:\n\n```bash\nsleep 6\npython3 -c "print(sum(i * i for i in range(3_000_000)))"\n```\n'


def prepare_environment() -> dict:
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS stackbench_load WITH (FORCE)")
        admin.execute("CREATE DATABASE stackbench_load")
    redis.Redis.from_url(REDIS_URL).flushdb()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "stackbench_site.settings",
        "DATABASE_URL": PG_URL.rsplit("/", 1)[0] + "/stackbench_load",
        "CELERY_BROKER_URL": REDIS_URL,
        "STACKBENCH_VAR": tempfile.mkdtemp(prefix="stackbench-load-"),
    }
    os.environ.update(env)
    return env


def seed():
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from audits.importing import import_paths
    from stackbench_site.roles import assign_role

    sys.path.insert(0, str(ROOT / "bench"))
    from seed import fill

    call_command("migrate", interactive=False, verbosity=0)
    library, walkthrough, big = fill(100_000)
    for n in range(5):
        user = User.objects.create_user(f"triager{n}", password=PASSWORD)
        assign_role(user, "maintainer")
    export = {
        "version": "1.0",
        "walkthrough": {"title": "A slow tutorial", "description": "Commands that take a while."},
        "steps": [
            {"title": f"Step {n}", "displayOrder": n, "contentFields": {"contentForUser": SLOW_STEP}}
            for n in range(1, 11)
        ],
    }
    folder = Path(os.environ["STACKBENCH_VAR"]) / "exports"
    folder.mkdir()
    (folder / "wt_slow.json").write_text(json.dumps(export))
    (outcome,) = import_paths([folder / "wt_slow.json"], library_name=library.name)
    assert outcome.ok, outcome.message
    from audits.models import Problem, Run
    from walkthroughs.models import Walkthrough

    return {
        "runs": list(Run.objects.values_list("pk", flat=True)),
        "big_run": big.pk,
        "walkthroughs": list(Walkthrough.objects.values_list("pk", flat=True)),
        "problems": list(Problem.objects.values_list("pk", flat=True)),
        "library": library.pk,
        "slow": Walkthrough.objects.get(walkthrough_id="wt_slow"),
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(command, env) -> subprocess.Popen:
    return subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def stop(process: subprocess.Popen):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


class Person(threading.Thread):
    """One simulated person: logs in, then browses with think time between requests until the deadline."""

    def __init__(self, number, base, data, start, think, results):
        super().__init__(daemon=True)
        self.number, self.base, self.data, self.start_line, self.think = number, base, data, start, think
        self.results, self.random = results, random.Random(number)
        self.session = requests.Session()

    def request(self, action, method, path, **kwargs):
        started = time.perf_counter()
        try:
            response = self.session.request(method, self.base + path, timeout=30, allow_redirects=False, **kwargs)
            ok = response.status_code < 400
            detail = "" if ok else f"{response.status_code} {path}"
        except requests.RequestException as exc:
            ok, detail = False, f"{type(exc).__name__} {path}: {str(exc)[:160]}"
        self.results.append((action, (time.perf_counter() - started) * 1000, ok, detail))

    def log_in(self):
        form = self.session.get(self.base + "/login/", timeout=30).text
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        done = self.session.post(
            self.base + "/login/",
            timeout=30,
            allow_redirects=False,
            data={"username": f"triager{self.number % 5}", "password": PASSWORD, "csrfmiddlewaretoken": token},
        )
        assert done.status_code == 302, f"login failed: {done.status_code}"

    def act(self):
        pick, data = self.random, self.data
        action = pick.choices(list(ACTIONS), weights=[weight for weight, _ in ACTIONS.values()])[0]
        ACTIONS[action][1](self, pick, data)

    def run(self):
        # Everyone logs in before the clock starts: 50 password hashes at once are not what a minute of use is.
        self.log_in()
        self.start_line.wait()
        while time.monotonic() < self.start_line.deadline:
            self.act()
            time.sleep(self.random.uniform(*self.think))


def _filtered_gaps(person, pick, data):
    query = {
        "severity": pick.choice(["", "critical", "warning", "info"]),
        "type": pick.choice([""] + TYPES),
        "q": pick.choice(["", "Problem 1", "file3.py"]),
        "sort": pick.choice(["", "severity", "newest"]),
        "page": pick.choice(["", "2", "5"]),
    }
    person.request(
        "filter gaps (htmx)",
        "GET",
        "/gaps/",
        params={k: v for k, v in query.items() if v},
        headers={"HX-Request": "true"},
    )


def _triage(person, pick, data):
    problem = pick.choice(data["problems"])
    person.request(
        "triage (POST)",
        "POST",
        f"/problems/{problem}/triage/",
        data={"state": pick.choice(["open", "confirmed"]), "assignee": "keep"},
        headers={
            "X-CSRFToken": person.session.cookies.get("csrftoken", ""),
            "Referer": person.base + f"/problems/{problem}/",
        },
    )


ACTIONS = {
    "home": (10, lambda person, pick, data: person.request("home", "GET", "/")),
    "library": (5, lambda person, pick, data: person.request("library", "GET", f"/libraries/{data['library']}/")),
    "runs list": (10, lambda person, pick, data: person.request("runs list", "GET", "/runs/")),
    "open a run": (
        15,
        lambda person, pick, data: person.request("open a run", "GET", f"/runs/{pick.choice(data['runs'])}/"),
    ),
    "open the 1000-gap run": (
        3,
        lambda person, pick, data: person.request("open the 1000-gap run", "GET", f"/runs/{data['big_run']}/"),
    ),
    "watch a live run": (
        10,
        lambda person, pick, data: person.request(
            "watch a live run", "GET", f"/runs/{pick.choice(data['live'])}/live/", headers={"HX-Request": "true"}
        ),
    ),
    "gaps list": (8, lambda person, pick, data: person.request("gaps list", "GET", "/gaps/")),
    "filter gaps (htmx)": (12, _filtered_gaps),
    "walkthrough": (
        8,
        lambda person, pick, data: person.request(
            "walkthrough", "GET", f"/walkthroughs/{pick.choice(data['walkthroughs'])}/"
        ),
    ),
    "problems": (
        6,
        lambda person, pick, data: person.request(
            "problems", "GET", "/problems/", params={"state": pick.choice(["open", "confirmed", ""])}
        ),
    ),
    "open a problem": (
        6,
        lambda person, pick, data: person.request(
            "open a problem", "GET", f"/problems/{pick.choice(data['problems'])}/"
        ),
    ),
    "triage (POST)": (7, _triage),
}


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def report(results, seconds):
    latencies = [ms for _, ms, _, _ in results]
    errors = [detail for _, _, ok, detail in results if not ok]
    print(
        f"\n{len(results)} requests in {seconds:.0f} s: {len(results) / seconds:.1f} requests/s, {len(errors)} errors"
    )
    print(
        f"latency ms: p50 {percentile(latencies, 0.5):.0f}, p95 {percentile(latencies, 0.95):.0f}, "
        f"p99 {percentile(latencies, 0.99):.0f}, max {max(latencies):.0f}"
    )
    by_action = defaultdict(list)
    for action, ms, ok, _ in results:
        by_action[action].append((ms, ok))
    print(f"\n{'action':<24}{'count':>7}{'p50':>7}{'p95':>7}{'p99':>7}{'errors':>8}")
    for action, rows in sorted(by_action.items()):
        values = [ms for ms, _ in rows]
        print(
            f"{action:<24}{len(rows):>7}{statistics.median(values):>7.0f}{percentile(values, 0.95):>7.0f}"
            f"{percentile(values, 0.99):>7.0f}{sum(1 for _, ok in rows if not ok):>8}"
        )
    for detail in sorted(set(errors))[:10]:
        print("  error:", detail)
    return len(errors)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--think",
        type=float,
        nargs=2,
        default=(0.5, 2.0),
        metavar=("MIN", "MAX"),
        help="seconds a person waits between requests (default 0.5 to 2)",
    )
    args = parser.parse_args()

    env = prepare_environment()
    started = time.monotonic()
    data = seed()
    print(
        f"seeded 100,000 gaps, 500 runs, 50 problems in {time.monotonic() - started:.0f} s; "
        f"{os.cpu_count()} cores; PostgreSQL + Redis"
    )
    from audits.actions import do_start_audit
    from audits.models import Run
    from stackbench_site.launcher import web_command, worker_command

    port = free_port()
    web = start(web_command("127.0.0.1", port), env)
    worker = start(worker_command(concurrency=2), env)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                if requests.get(base + "/login/", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.2)
        live = [do_start_audit(data["slow"], origin="load", options={"timeout": 60}).pk for _ in range(2)]
        data["live"] = live
        results = []
        start_line = threading.Barrier(
            args.users + 1, action=lambda: setattr(start_line, "deadline", time.monotonic() + args.seconds)
        )
        people = [Person(n, base, data, start_line, args.think, results) for n in range(args.users)]
        for person in people:
            person.start()
        while Run.objects.filter(pk__in=live, status="running").count() < 2:
            time.sleep(0.2)
        start_line.wait()
        began = time.monotonic()
        for person in people:
            person.join()
        elapsed = time.monotonic() - began
        states = {
            run.pk: (run.status, run.progress_current, run.progress_total) for run in Run.objects.filter(pk__in=live)
        }
        print(
            f"{args.users} people for {args.seconds:.0f} s, think time {args.think[0]}-{args.think[1]} s; "
            f"background runs {', '.join(f'#{pk} {s} step {c}/{t}' for pk, (s, c, t) in states.items())}"
        )
        errors = report(results, elapsed)
    finally:
        stop(web)
        stop(worker)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
