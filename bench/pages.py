"""Dashboard page speed: fills a fresh database with 1 library, 50 walkthroughs of 10 steps, 500 runs and
100,000 gaps (one run holding 1,000 of them), then times the server side of the main pages, at two sizes so
the query counts can be compared (they must not grow with the rows).

    .venv/bin/python bench/pages.py                     # SQLite in a temporary folder
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/pages.py
                                                          # PostgreSQL (uses its own database, stackbench_bench)

Target: each page under 150 ms median; the same number of queries at 1,000 and 100,000 gaps."""

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["STACKBENCH_VAR"] = tempfile.mkdtemp(prefix="stackbench-bench-")
os.environ["DJANGO_SETTINGS_MODULE"] = "stackbench_site.settings"
if os.environ.get("DATABASE_URL", "").startswith("postgres"):
    base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS stackbench_bench")
        admin.execute("CREATE DATABASE stackbench_bench")
    os.environ["DATABASE_URL"] = f"{base}/stackbench_bench"

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from seed import fill  # noqa: E402

from audits.models import Gap  # noqa: E402


def measure(client, url, repeat=7):
    times = []
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    query_count = len(queries)  # read now: the next request clears the connection's query log
    assert response.status_code == 200, (url, response.status_code)
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(url)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), query_count


def run_scale(total_gaps):
    call_command("flush", interactive=False, verbosity=0)
    library, walkthrough, big = fill(total_gaps)
    user = User.objects.create_superuser("bench", "b@example.com", "pw")
    client = Client()
    client.force_login(user)
    pages = {
        "home": "/",
        f"run page ({big.gaps.count()} gaps)": f"/runs/{big.pk}/",
        "gaps list": "/gaps/",
        "gaps list, filtered": "/gaps/?severity=critical&type=clarity&q=Problem+1",
        "gaps list, by severity": "/gaps/?sort=severity",
        "walkthrough (latest 40 runs)": f"/walkthroughs/{walkthrough.pk}/",
        "walkthrough (10 x 500 timeline)": f"/walkthroughs/{walkthrough.pk}/?runs=all",
        "runs list": "/runs/",
    }
    return {name: measure(client, url) for name, url in pages.items()}, Gap.objects.count()


def main():
    call_command("migrate", interactive=False, verbosity=0)
    vendor = connection.vendor
    small, small_count = run_scale(1_000 + 499)
    large, large_count = run_scale(100_000)
    print(f"database: {vendor}; gaps: {small_count} then {large_count}; 500 runs, 50 walkthroughs of 10 steps")
    print(f"{'page':<34}{'median ms':>10}{'queries':>9}{'queries at ' + str(small_count):>20}")
    for name, (median, queries) in large.items():
        key = next(k for k in small if k.split(" (")[0] == name.split(" (")[0])
        print(f"{name:<34}{median:>10.1f}{queries:>9}{small[key][1]:>20}")


if __name__ == "__main__":
    main()
