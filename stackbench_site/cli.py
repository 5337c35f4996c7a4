"""The `stackbench` command. Engine commands (audit, validate, extract, generate, mcp-server) run without the
database; the others set Django up first.

Past 500 lines, on purpose: each command's options sit on its own handler (Typer), so the module is the whole
command line read top to bottom; what the commands do lives in the engines and the apps."""

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Literal

# Settings are read (never the database touched) by the engine commands too: the engines' configuration comes from
# them. Set before anything imports Django.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")

import typer
from django.conf import settings
from rich.box import Box
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

from stackbench.auditing.common import AuditError, AuditObserver, AuditRequest
from stackbench.formats.results import DEFAULT_GATE_LEVEL, GATE_LEVELS
from stackbench.formats.walkthrough import GAP_SEVERITY, GAP_TYPES, doc_name
from stackbench.lib.jsonfiles import FormatError, load_json_file, write_model, write_text_atomically
from stackbench_site import configuration
from stackbench_site.roles import ROLE_NAMES, assign_role

Backend = Literal["rules", "claude"]
GateLevel = Literal[tuple(GATE_LEVELS)]
Role = Literal[tuple(ROLE_NAMES)]
DASHED_HEAD = Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)
# The servers' own parsers read every argument, --help included.
PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []}

app = typer.Typer(
    help="Where your library's docs fail their readers.",
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_show_locals=False,  # a crash would print tokens and passwords
)
walkthrough_commands = typer.Typer(help="audit walkthroughs")
app.add_typer(walkthrough_commands, name="walkthrough")


class CommandError(Exception):
    """A failure the user can act on: printed without a traceback, exit status 2."""


def setup_django():
    import django

    django.setup()


def _print_table(table: Table) -> None:
    """A table on stdout: fitted to a terminal; through a pipe whole lines (no wrapping at 80 columns) without the
    blanks a last column is padded with, so scripts read what they always did."""
    console = Console(markup=False, emoji=False, highlight=False, width=None if sys.stdout.isatty() else 10_000)
    with console.capture() as captured:
        console.print(table)
    print("\n".join(line.rstrip() for line in captured.get().splitlines()), flush=True)


def _table(*columns: Column | str, header: bool = True, ruled: bool = False) -> Table:
    # Columns two spaces apart without borders, a dashed line under the header if ruled: the layout this command's
    # tables had as plain text.
    return Table(
        *columns,
        box=DASHED_HEAD if ruled else None,
        padding=(0, 1, 0, 0) if ruled else (0, 1),  # the box's blank divider is the second space
        show_edge=False,
        pad_edge=False,
        show_header=header,
        header_style="bold",
    )


@contextmanager
def _progress(description: str, total: int | None = None) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr (pulsing when the total is unknown) for a person at a terminal, gone when done;
    nothing at all otherwise. Gives the function that moves it one step on."""
    shown = sys.stderr.isatty()
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        disable=not shown,
        transient=True,
        # Lines for stdout go above the bar only when they share its terminal; a pipe gets them untouched.
        redirect_stdout=shown and sys.stdout.isatty(),
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda: progress.advance(task)


@app.command("import", help="import walkthrough exports and result files (or folders of them)")
def import_files(
    paths: Annotated[list[str], typer.Argument(help="files or folders", metavar="PATH", show_default=False)],
    library: Annotated[
        str | None, typer.Option(help="library for walkthrough exports that do not name one", metavar="NAME")
    ] = None,
):
    setup_django()
    from audits.importing import fileset_from_paths, import_fileset

    fileset = fileset_from_paths(paths)
    with _progress("Importing", total=len(fileset.files)) as advance:
        outcomes = import_fileset(fileset, library_name=library, on_file=advance)
    if not outcomes:
        raise CommandError("nothing to import: no JSON files found")
    table = _table(Column(min_width=9), Column(min_width=11), Column(), Column(), header=False)
    for outcome in outcomes:
        table.add_row(outcome.status, outcome.kind or "-", outcome.name, outcome.message)
    _print_table(table)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        print(f"\n{len(failed)} file(s) could not be imported; nothing from them was stored.", file=sys.stderr)
        raise typer.Exit(1)


@app.command(help="migrate, load sample data, and run the web app with a worker")
def up(
    host: Annotated[str, typer.Option()] = settings.STACKBENCH_HOST,
    port: Annotated[int, typer.Option()] = settings.STACKBENCH_PORT,
    workers: Annotated[int, typer.Option(help="worker processes for runs")] = settings.STACKBENCH_WORKERS,
    no_sample: Annotated[bool, typer.Option("--no-sample", help="do not load the sample data")] = False,
):
    setup_django()
    from stackbench_site.launcher import run_everything

    raise typer.Exit(run_everything(host=host, port=port, workers=workers, sample_data=not no_sample))


@app.command(help="run a Celery worker for runs")
def worker(
    concurrency: Annotated[int, typer.Option()] = 2,
    queues: Annotated[str, typer.Option()] = "celery",
    beat: Annotated[
        bool, typer.Option("--beat", help="also run the periodic recovery of dead runs (one worker)")
    ] = False,
):
    setup_django()
    from stackbench_site.launcher import worker_command

    os.execv(sys.executable, worker_command(concurrency, queues, beat=beat))


class _PrintProgress(AuditObserver):
    """Audit progress on the terminal: a line per step and per gap."""

    def step_started(self, number, total, title):
        print(f"Step {number}/{total}  {title}", flush=True)

    def gap_reported(self, seq, gap):
        print(f"    {gap.severity.upper():<8} {gap.gap_type:<16} {gap.description}", flush=True)


def _walkthrough_defaults(walkthrough_path: Path) -> tuple[str, str]:
    """Library name and version from the export's metadata, else from the stored walkthrough if any."""
    try:
        data = load_json_file(walkthrough_path)
    except FormatError:
        return "", ""
    meta = (
        {**((data.get("walkthrough") or {}).get("metadata") or {}), **(data.get("metadata") or {})}
        if isinstance(data, dict)
        else {}
    )
    name, version = str(meta.get("library") or ""), str(meta.get("libraryVersion") or meta.get("version") or "")
    if name and version:
        return name, version
    try:
        setup_django()
        from walkthroughs.models import Walkthrough

        stored = Walkthrough.objects.select_related("library").filter(walkthrough_id=walkthrough_path.stem).first()
    except Exception:  # no database yet: the export's metadata is all there is
        stored = None
    if stored:
        return name or stored.library.name, version or stored.library.default_version
    return name, version


@walkthrough_commands.command("audit", help="follow a walkthrough step by step and report its gaps")
def audit(
    walkthrough: Annotated[
        str, typer.Option("-w", "--walkthrough", help="walkthrough export (wt_<id>.json)", metavar="FILE")
    ],
    library: Annotated[
        str | None,
        typer.Option(
            "-l", "--library", help="library name (default: from the walkthrough or the stored library)", metavar="LIB"
        ),
    ] = None,
    version: Annotated[
        str | None,
        typer.Option(
            "-v",
            "--version",
            help="library version (default: from the walkthrough or the stored library)",
            metavar="VER",
        ),
    ] = None,
    output: Annotated[
        str, typer.Option("-o", "--output", help="folder for the audit files", metavar="DIR")
    ] = "audit_results",
    working_dir: Annotated[
        str | None, typer.Option(help="folder to follow the steps in (default: a throwaway folder)", metavar="DIR")
    ] = None,
    backend: Annotated[Backend, typer.Option()] = "rules",
    timeout: Annotated[
        float | None, typer.Option(help="seconds each command may take (default: 120)", metavar="S")
    ] = None,
):
    from stackbench.auditing.run import run_audit

    path = Path(walkthrough).resolve()
    if not path.is_file():
        raise CommandError(f"{walkthrough}: no such file")
    default_name, default_version = _walkthrough_defaults(path)
    try:
        sandbox = configuration.sandbox_settings(**({"timeout": timeout} if timeout else {}))
    except LookupError as exc:
        raise CommandError(str(exc)) from None
    request = AuditRequest(
        walkthrough_path=path,
        output_dir=Path(output).resolve(),
        library_name=library or default_name,
        library_version=version or default_version,
        working_dir=Path(working_dir).resolve() if working_dir else None,
        sandbox=sandbox,
    )
    print(f"Auditing {path.name} with the {backend} auditor; results in {request.output_dir}", flush=True)
    try:
        result = run_audit(request, backend=backend, observer=_PrintProgress(), claude=configuration.claude_settings())
    except AuditError as exc:
        raise CommandError(f"the audit could not run: {exc}") from None
    print(
        f"\n{result.completed_steps}/{result.total_steps} steps completed in {result.duration_seconds:.1f} s; "
        f"{len(result.gaps)} gaps; {'success' if result.success else 'not a success'}"
    )
    table = _table(
        Column("gap type", min_width=18),
        *(Column(severity, justify="right", min_width=8) for severity in GAP_SEVERITY),
        Column("total", justify="right", min_width=6),
        ruled=True,
    )
    for gap_type in GAP_TYPES:
        counts = [sum(1 for g in result.gaps if g.gap_type == gap_type and g.severity == s) for s in GAP_SEVERITY]
        table.add_row(gap_type, *map(str, counts), str(sum(counts)))
    _print_table(table)
    print(f"\nWrote {request.audit_path}, {request.session_path.name} and agent_logs/")


@walkthrough_commands.command("generate", help="turn a tutorial page into a walkthrough export")
def generate(
    doc_path: Annotated[str, typer.Option(help="the tutorial page (markdown)", metavar="PAGE.md")],
    library: Annotated[str, typer.Option("-l", "--library", metavar="LIB")],
    version: Annotated[str, typer.Option("-v", "--version", metavar="VER")] = "",
    output: Annotated[
        str,
        typer.Option(
            "-o", "--output", help="folder for wt_<hash>.json (default: here)", metavar="DIR", show_default=False
        ),
    ] = ".",
    docs_root: Annotated[
        str | None,
        typer.Option(
            help="the docs folder included files are looked up from (default: the page's folder)", metavar="DIR"
        ),
    ] = None,
    backend: Annotated[Backend, typer.Option()] = "rules",
):
    from stackbench.generation.claude import GenerationError, generate_with_claude
    from stackbench.generation.rules import generate_walkthrough

    doc = Path(doc_path)
    if not doc.is_file():
        raise CommandError(f"{doc_path}: no such file")
    try:
        if backend == "claude":
            walkthrough_id, export = generate_with_claude(doc, library, configuration.claude_settings(), version)
        else:
            root = Path(docs_root) if docs_root else None
            walkthrough_id, export = generate_walkthrough(doc, library, version, docs_root=root)
    except (GenerationError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"could not generate a walkthrough from {doc}: {exc}") from None
    folder = Path(output)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{walkthrough_id}.json"
    write_text_atomically(target, json.dumps(export, indent=2, ensure_ascii=False))
    print(f"{target}: {len(export['steps'])} steps — {export['walkthrough']['title']}")


@app.command(help="run every code example in a fresh virtualenv")
def validate(
    extraction: Annotated[str, typer.Option(help="folder of <doc>_analysis.json files", metavar="DIR")],
    output: Annotated[
        str, typer.Option(help="folder for <doc>_validation.json and validation_summary.json", metavar="DIR")
    ],
    num_workers: Annotated[
        int | None, typer.Option(help="documents validated at once (default: number of cores)", metavar="N")
    ] = None,
    timeout: Annotated[float, typer.Option(help="seconds each example may run", metavar="S")] = 30.0,
    find_links: Annotated[
        list[str] | None, typer.Option(help="a folder of wheels to install from", metavar="DIR")
    ] = None,
    no_index: Annotated[bool, typer.Option("--no-index", help="install only from --find-links (offline)")] = False,
):
    from stackbench.validation.batch import load_analyses, validate_all
    from stackbench.validation.options import ValidationError, ValidationObserver

    folder = Path(extraction)
    if not folder.is_dir():
        raise CommandError(f"{extraction}: no such folder")
    analyses, problems = load_analyses(folder)
    for problem in problems:
        print(f"stackbench: skipped {problem}", file=sys.stderr)
    if not analyses:
        raise CommandError(f"no readable *_analysis.json in {folder}")
    options = configuration.validation_options(
        timeout=timeout,
        num_workers=num_workers or (os.cpu_count() or 2),
        find_links=[Path(p).resolve() for p in find_links or []],
        offline=no_index,
    )
    total = sum(len(a.examples) for a in analyses)
    print(f"Validating {total} examples of {len(analyses)} documents with {options.num_workers} workers", flush=True)

    class PrintProgress(ValidationObserver):
        def example_finished(self, page, result):
            advance()

        def document_finished(self, page, result):
            lines = [f"{page}: {result.successful} passed, {result.failed} failed, {result.skipped} skipped"]
            lines += [f"    could not set up: {p.message}" for p in result.setup_problems]
            lines += [
                f"    line {r.line} {r.severity}: {(r.error_message or '').splitlines()[0][:200]}"
                for r in result.results
                if r.status == "failure"
            ]
            print("\n".join(lines), flush=True)

    try:
        with _progress("Validating", total) as advance:
            summary = validate_all(analyses, Path(output), options, PrintProgress())
    except ValidationError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write the results to {output}: {exc.strerror or exc}") from None
    print()
    table = _table(
        Column("document", min_width=8),
        *(Column(name, justify="right") for name in ("examples", "passed", "failed", "skipped")),
    )
    for doc in summary.documents:
        table.add_row(doc.page, *map(str, (doc.total_examples, doc.successful, doc.failed, doc.skipped)))
    _print_table(table)
    by_severity = ", ".join(f"{count} {severity}" for severity, count in summary.failed_by_severity.items())
    print(
        f"\n{summary.total_examples} examples in {summary.validation_duration_seconds:.1f} s; "
        f"{summary.failed} failed ({by_severity}). Results in {output}/"
    )
    not_set_up = [d.page for d in summary.documents if d.setup_problems]
    if not_set_up:
        print(f"\n{len(not_set_up)} page(s) could not be fully set up: {', '.join(not_set_up)}", file=sys.stderr)
        raise typer.Exit(3)
    raise typer.Exit(2 if problems else 0)


@app.command(help="extract the code examples of a docs folder into *_analysis.json")
def extract(
    docs: Annotated[str, typer.Option(help="the docs folder", metavar="DIR")],
    library: Annotated[str, typer.Option(metavar="LIB")],
    output: Annotated[str, typer.Option(metavar="DIR")],
    include: Annotated[
        str | None,
        typer.Option(help="only pages matching this glob (relative to the folder), e.g. 'guide/*.md'", metavar="GLOB"),
    ] = None,
    version: Annotated[str, typer.Option(metavar="VER")] = "",
):
    from stackbench.docs.extractor import doc_pages, extract_docs

    folder = Path(docs)
    if not folder.is_dir():
        raise CommandError(f"{docs}: no such folder")
    with _progress("Extracting", total=len(doc_pages(folder, include))) as advance:
        report = extract_docs(folder, library, version or None, include=include, on_page=advance)
    target = Path(output)
    try:
        target.mkdir(parents=True, exist_ok=True)
        for page, analysis in report.analyses:
            write_model(target / f"{doc_name(page)}_analysis.json", analysis)
    except OSError as exc:
        raise CommandError(f"cannot write to {target}: {exc.strerror}") from None
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for page, analysis in report.analyses:
        runnable = sum(1 for e in analysis.examples if e.execution_context != "not_executable")
        print(f"{page}: {len(analysis.examples)} examples ({runnable} runnable)")
    print(f"\n{len(report.analyses)} page(s) with code; analyses in {target}/")


@app.command(help="fail a CI job on new or regressed problems of a run")
def gate(
    run: Annotated[int, typer.Option(help="run id", metavar="ID")],
    fail_on: Annotated[
        GateLevel,
        typer.Option(
            help="open-LEVEL: any problem of the run at or above LEVEL that is not triaged away (default "
            f"{DEFAULT_GATE_LEVEL}); new-LEVEL: only problems new or regressed in this run",
            show_default=False,
        ),
    ] = DEFAULT_GATE_LEVEL,
    url: Annotated[
        str | None,
        typer.Option(help="the dashboard's URL (default: this machine's database; env STACKBENCH_URL)", metavar="URL"),
    ] = None,
    token: Annotated[str | None, typer.Option(help="an API token (env STACKBENCH_TOKEN)", metavar="T")] = None,
):
    """Exit 1 when the run has open (or, with new-LEVEL, new or regressed) problems at or above the level."""
    url = url or settings.STACKBENCH_URL
    report = _remote_gate(url, token or settings.STACKBENCH_TOKEN, run, fail_on) if url else _local_gate(run, fail_on)
    if report["status"] in ("queued", "running"):
        raise CommandError(f"run {run} is still {report['status']}; gate it once it has finished")
    if report["status"] != "succeeded":
        print(f"Run {run} did not succeed ({report['status']}): failing the gate.")
        raise typer.Exit(1)
    if report["problems"]:
        table = _table(Column(min_width=8), Column(min_width=9), Column(), Column(), header=False)
        for p in report["problems"]:
            table.add_row(p["severity"].upper(), p["lifecycle"], p["title"][:120], p["url"])
        _print_table(table)
    which, level = fail_on.split("-", 1)
    kind = "open" if which == "open" else "new or regressed"
    if not report["passed"]:
        print(f"\nGate failed: {len(report['problems'])} {kind} problem(s) at {level} or above.")
        raise typer.Exit(1)
    print(f"Gate passed: no {kind} problems at {level} or above in run {run}.")


def _local_gate(run_id: int, fail_on: str) -> dict:
    """The gate report from this machine's database, in the shape the API answers it."""
    setup_django()
    from audits.models import Run
    from audits.reports import gate_report

    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        raise CommandError(f"there is no run {run_id}")
    report = gate_report(run, fail_on)
    return {
        "status": run.status,
        "passed": report.passed,
        "problems": [
            {"severity": p.severity, "lifecycle": p.lifecycle, "title": p.title, "url": p.get_absolute_url()}
            for p in report.problems
        ],
    }


def _remote_gate(url: str, token: str, run_id: int, fail_on: str) -> dict:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        f"{url.rstrip('/')}/api/v1/runs/{run_id}/gate?fail_on={fail_on}",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise CommandError(f"{url} answered {exc.code}: {exc.read().decode('utf-8', 'replace')[:300]}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise CommandError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from None


@app.command(help="create or update a user with a role")
def user(
    username: Annotated[str, typer.Argument(metavar="NAME", show_default=False)],
    role: Annotated[Role, typer.Option()],
    email: Annotated[str | None, typer.Option(metavar="E")] = None,
    password: Annotated[
        str | None, typer.Option(help="default: a generated one for new users, printed once", metavar="P")
    ] = None,
):
    setup_django()
    import secrets

    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    account = users.filter(username=username).first()
    new_password = password or (None if account else secrets.token_urlsafe(12))
    if account is None:
        account = users.create_user(username, email or "", new_password)
    elif new_password:
        account.set_password(new_password)
        account.save()
    try:
        assign_role(account, role)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print(
        f"{account.get_username()} is a {role}"
        + (f"; password: {new_password}" if new_password and not password else "")
    )


@app.command(help="issue an API token for a user (printed once)")
def token(
    user: Annotated[str, typer.Option(metavar="NAME")],
    name: Annotated[str, typer.Option(metavar="NAME")] = "ci",
):
    setup_django()
    from django.contrib.auth import get_user_model

    from audits.models import ApiToken

    account = get_user_model().objects.filter(username=user).first()
    if account is None:
        raise CommandError(f"there is no user {user}")
    _, key = ApiToken.issue(account, name)
    print(key)


@app.command(
    "mcp-server", help="run the MCP step server on stdio (--help for its options)", context_settings=PASS_THROUGH
)
def mcp_server(context: typer.Context):
    from stackbench.auditing.step_server import main as serve

    serve(context.args)


@app.command(
    "present-server", help="run the MCP server agents present code walkthroughs with", context_settings=PASS_THROUGH
)
def present_server(context: typer.Context):
    from walkthroughs.present_server import main as serve

    raise typer.Exit(serve(context.args) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and answer its exit status: 0 done, 1 imports rejected or the gate failed, 2 it could not
    run (a CommandError, said on stderr without a traceback) or a usage error, 3 a page could not be set up."""
    try:
        app(args=sys.argv[1:] if argv is None else list(argv), prog_name="stackbench")
    except SystemExit as done:  # Typer ends every command this way, Ctrl-C included (130)
        return int(done.code or 0)
    except CommandError as exc:
        print(f"stackbench: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
