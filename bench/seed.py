"""Realistic dashboard data for the benchmarks: 1 library, 50 walkthroughs of 10 steps, 500 audit runs, the gaps
spread over them (one run holding big_run_gaps of them) and 50 problems they belong to. Needs Django set up."""

from django.db import connection
from django.utils import timezone

from audits.models import Gap, Problem, Run
from walkthroughs.models import Library, Step, Walkthrough

TYPES = ["clarity", "prerequisite", "logical_flow", "execution_error", "completeness", "cross_reference"]
SEVERITIES = ["critical", "warning", "info"]


def fill(total_gaps: int, big_run_gaps: int = 1000):
    library = Library.objects.create(name="benchlib", default_version="1.0")
    walkthroughs = Walkthrough.objects.bulk_create(
        Walkthrough(
            library=library,
            walkthrough_id=f"wt_{i:04d}",
            title=f"Tutorial {i}",
            source={"steps": []},
            content_hash=str(i),
        )
        for i in range(50)
    )
    Step.objects.bulk_create(
        Step(
            walkthrough=w,
            position=p,
            display_order=p,
            title=f"Step {p}",
            content_for_user=f"# Step {p}\n\nRun:\n\n```bash\necho {p}\n```\n\nIt prints `{p}`.",
        )
        for w in walkthroughs
        for p in range(1, 11)
    )
    now = timezone.now()
    runs = Run.objects.bulk_create(
        Run(
            kind="audit",
            library=library,
            walkthrough=walkthroughs[0],
            status="succeeded",
            backend="rules",
            progress_current=10 if i % 7 else 6,
            progress_total=10,
            created_at=now - timezone.timedelta(hours=500 - i),
            started_at=now,
            finished_at=now,
            duration_seconds=2.0,
        )
        for i in range(500)
    )
    big = runs[-1]
    rest = runs[:-1]
    per_run = max((total_gaps - big_run_gaps) // len(rest), 0)
    batch = []

    def gap(run, n):
        step = n % 10 + 1
        return Gap(
            run=run,
            seq=n,
            step_number=step,
            step_title=f"Step {step}",
            gap_type=TYPES[n % 6],
            severity=SEVERITIES[n % 3],
            description=f"Problem {n % 50} in `file{n % 7}.py`",
            suggested_fix="Fix it.",
            context=f"$ echo {n}\n(exit 1)",
            timestamp=now,
            fingerprint=f"{n % 50:032d}",
        )

    for n in range(big_run_gaps):
        batch.append(gap(big, n))
    for run in rest:
        for n in range(per_run):
            batch.append(gap(run, n))
            if len(batch) >= 20000:
                Gap.objects.bulk_create(batch)
                batch = []
    Gap.objects.bulk_create(batch)
    problems = Problem.objects.bulk_create(
        Problem(
            fingerprint=f"{n:032d}",
            kind="audit",
            library=library,
            walkthrough=walkthroughs[0],
            step_number=n % 10 + 1,
            step_title=f"Step {n % 10 + 1}",
            gap_type=TYPES[n % 6],
            severity=SEVERITIES[n % 3],
            rank=3 - n % 3,
            title=f"Problem {n}",
            first_run=runs[0],
            last_run=big,
            first_seen_at=now,
            last_seen_at=now,
            sightings=500,
        )
        for n in range(50)
    )
    for problem in problems:
        Gap.objects.filter(fingerprint=problem.fingerprint).update(problem=problem)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # fresh statistics, as autovacuum (PostgreSQL) would have by now
    return library, walkthroughs[0], big
