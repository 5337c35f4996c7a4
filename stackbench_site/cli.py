"""The `stackbench` command. Engine commands (audit, validate, extract, generate, mcp-server) run without the
database; the others set Django up first."""

import argparse
import json
import os
import sys
from pathlib import Path

# Settings are read (never the database touched) by the engine commands too: the engines' configuration comes from
# them. Set before anything imports Django.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "stackbench_site.settings")

from django.conf import settings

from stackbench.auditing.common import AuditError, AuditObserver, AuditRequest
from stackbench.formats.results import DEFAULT_GATE_LEVEL, GATE_LEVELS
from stackbench.formats.walkthrough import GAP_SEVERITY, GAP_TYPES, doc_name
from stackbench.lib.jsonfiles import FormatError, load_json_file, write_model, write_text_atomically
from stackbench_site import configuration


class CommandError(Exception):
    """A failure the user can act on: printed without a traceback, exit status 2."""


def setup_django():
    import django

    django.setup()


def command_import(args):
    setup_django()
    from audits.importing import import_paths

    outcomes = import_paths(args.paths, library_name=args.library)
    width = max((len(o.name) for o in outcomes), default=4)
    for outcome in outcomes:
        print(f"{outcome.status:<10} {outcome.kind or '-':<12} {outcome.name:<{width}}  {outcome.message}")
    if not outcomes:
        raise CommandError("nothing to import: no JSON files found")
    failed = [o for o in outcomes if not o.ok]
    if failed:
        print(f"\n{len(failed)} file(s) could not be imported; nothing from them was stored.", file=sys.stderr)
        return 1
    return 0


def command_up(args):
    setup_django()
    from stackbench_site.launcher import run_everything

    return run_everything(host=args.host, port=args.port, workers=args.workers, sample_data=not args.no_sample)


def command_worker(args):
    setup_django()
    from stackbench_site.launcher import worker_command

    os.execv(sys.executable, worker_command(args.concurrency, args.queues, beat=args.beat))


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


def command_audit(args):
    from stackbench.auditing.run import run_audit

    path = Path(args.walkthrough).resolve()
    if not path.is_file():
        raise CommandError(f"{args.walkthrough}: no such file")
    default_name, default_version = _walkthrough_defaults(path)
    try:
        sandbox = configuration.sandbox_settings(**({"timeout": args.timeout} if args.timeout else {}))
    except LookupError as exc:
        raise CommandError(str(exc)) from None
    request = AuditRequest(
        walkthrough_path=path,
        output_dir=Path(args.output).resolve(),
        library_name=args.library or default_name,
        library_version=args.version or default_version,
        working_dir=Path(args.working_dir).resolve() if args.working_dir else None,
        sandbox=sandbox,
    )
    print(f"Auditing {path.name} with the {args.backend} auditor; results in {request.output_dir}", flush=True)
    try:
        result = run_audit(
            request, backend=args.backend, observer=_PrintProgress(), claude=configuration.claude_settings()
        )
    except AuditError as exc:
        raise CommandError(f"the audit could not run: {exc}") from None
    _print_audit_summary(result, request)
    return 0


def _print_audit_summary(result, request):
    print(
        f"\n{result.completed_steps}/{result.total_steps} steps followed in {result.duration_seconds:.1f} s; "
        f"{len(result.gaps)} gaps; {'success' if result.success else 'not a success'}"
    )
    header = f"{'gap type':<18}" + "".join(f"{s:>10}" for s in GAP_SEVERITY) + f"{'total':>8}"
    print(header)
    print("-" * len(header))
    for gap_type in GAP_TYPES:
        counts = [sum(1 for g in result.gaps if g.gap_type == gap_type and g.severity == s) for s in GAP_SEVERITY]
        print(f"{gap_type:<18}" + "".join(f"{c:>10}" for c in counts) + f"{sum(counts):>8}")
    print(f"\nWrote {request.audit_path}, {request.session_path.name} and agent_logs/")


def command_validate(args):
    from stackbench.validation.batch import load_analyses, validate_all
    from stackbench.validation.options import ValidationError, ValidationObserver

    class PrintProgress(ValidationObserver):
        def document_finished(self, page, result):
            lines = [f"{page}: {result.successful} passed, {result.failed} failed, {result.skipped} skipped"]
            lines += [f"    could not set up: {p.message}" for p in result.setup_problems]
            lines += [
                f"    line {r.line} {r.severity}: {(r.error_message or '').splitlines()[0][:200]}"
                for r in result.results
                if r.status == "failure"
            ]
            print("\n".join(lines), flush=True)

    folder = Path(args.extraction)
    if not folder.is_dir():
        raise CommandError(f"{args.extraction}: no such folder")
    analyses, problems = load_analyses(folder)
    for problem in problems:
        print(f"stackbench: skipped {problem}", file=sys.stderr)
    if not analyses:
        raise CommandError(f"no readable *_analysis.json in {folder}")
    options = configuration.validation_options(
        timeout=args.timeout,
        num_workers=args.num_workers or (os.cpu_count() or 2),
        find_links=[Path(p).resolve() for p in args.find_links],
        offline=args.no_index,
    )
    total = sum(len(a.examples) for a in analyses)
    print(f"Validating {total} examples of {len(analyses)} documents with {options.num_workers} workers", flush=True)
    try:
        summary = validate_all(analyses, Path(args.output), options, PrintProgress())
    except ValidationError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write the results to {args.output}: {exc.strerror or exc}") from None
    _print_validation_summary(summary, Path(args.output))
    not_set_up = [d.page for d in summary.documents if d.setup_problems]
    if not_set_up:
        print(f"\n{len(not_set_up)} page(s) could not be fully set up: {', '.join(not_set_up)}", file=sys.stderr)
        return 3
    return 2 if problems else 0


def _print_validation_summary(summary, output):
    width = max([len(d.page) for d in summary.documents] + [8])
    print(f"\n{'document':<{width}} {'examples':>9} {'passed':>7} {'failed':>7} {'skipped':>8}")
    for doc in summary.documents:
        print(f"{doc.page:<{width}} {doc.total_examples:>9} {doc.successful:>7} {doc.failed:>7} {doc.skipped:>8}")
    by_severity = ", ".join(f"{count} {severity}" for severity, count in summary.failed_by_severity.items())
    print(
        f"\n{summary.total_examples} examples in {summary.validation_duration_seconds:.1f} s; "
        f"{summary.failed} failed ({by_severity}). Results in {output}/"
    )


def command_gate(args):
    """Exit 1 when the run has open (or, with new-LEVEL, new or regressed) problems at or above the level."""
    url = args.url or settings.STACKBENCH_URL
    if url:
        report = _remote_gate(url, args.token or settings.STACKBENCH_TOKEN, args.run, args.fail_on)
    else:
        setup_django()
        from audits.models import Run, gate_problems

        run = Run.objects.filter(pk=args.run).first()
        if run is None:
            raise CommandError(f"there is no run {args.run}")
        problems = gate_problems(run, args.fail_on)
        report = {
            "status": run.status,
            "problems": [
                {"severity": p.severity, "lifecycle": p.lifecycle, "title": p.title, "url": p.get_absolute_url()}
                for p in problems
            ],
        }
    if report["status"] in ("queued", "running"):
        raise CommandError(f"run {args.run} is still {report['status']}; gate it once it has finished")
    if report["status"] != "succeeded":
        print(f"Run {args.run} did not succeed ({report['status']}): failing the gate.")
        return 1
    for problem in report["problems"]:
        print(f"{problem['severity'].upper():<8} {problem['lifecycle']:<9} {problem['title'][:120]}  {problem['url']}")
    which, level = args.fail_on.split("-", 1)
    kind = "open" if which == "open" else "new or regressed"
    if report["problems"]:
        print(f"\nGate failed: {len(report['problems'])} {kind} problem(s) at {level} or above.")
        return 1
    print(f"Gate passed: no {kind} problems at {level} or above in run {args.run}.")
    return 0


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


def command_user(args):
    setup_django()
    import secrets

    from django.contrib.auth import get_user_model

    from stackbench_site.roles import assign_role

    users = get_user_model().objects
    user = users.filter(username=args.username).first()
    password = args.password or (None if user else secrets.token_urlsafe(12))
    if user is None:
        user = users.create_user(args.username, args.email or "", password)
    elif password:
        user.set_password(password)
        user.save()
    try:
        assign_role(user, args.role)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print(
        f"{user.get_username()} is a {args.role}"
        + (f"; password: {password}" if password and not args.password else "")
    )
    return 0


def command_token(args):
    setup_django()
    from django.contrib.auth import get_user_model

    from audits.models import ApiToken

    user = get_user_model().objects.filter(username=args.user).first()
    if user is None:
        raise CommandError(f"there is no user {args.user}")
    _, key = ApiToken.issue(user, args.name)
    print(key)
    return 0


def command_extract(args):
    from stackbench.docs.extractor import extract_docs

    docs = Path(args.docs)
    if not docs.is_dir():
        raise CommandError(f"{args.docs}: no such folder")
    report = extract_docs(docs, args.library, args.version or None, include=args.include)
    output = Path(args.output)
    try:
        output.mkdir(parents=True, exist_ok=True)
        for page, analysis in report.analyses:
            write_model(output / f"{doc_name(page)}_analysis.json", analysis)
    except OSError as exc:
        raise CommandError(f"cannot write to {output}: {exc.strerror}") from None
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for page, analysis in report.analyses:
        runnable = sum(1 for e in analysis.examples if e.execution_context != "not_executable")
        print(f"{page}: {len(analysis.examples)} examples ({runnable} runnable)")
    print(f"\n{len(report.analyses)} page(s) with code; analyses in {output}/")
    return 0


def command_generate(args):
    from stackbench.generation.claude import GenerationError, generate_with_claude
    from stackbench.generation.rules import generate_walkthrough

    doc = Path(args.doc_path)
    if not doc.is_file():
        raise CommandError(f"{args.doc_path}: no such file")
    try:
        if args.backend == "claude":
            walkthrough_id, export = generate_with_claude(
                doc, args.library, configuration.claude_settings(), args.version or ""
            )
        else:
            docs_root = Path(args.docs_root) if args.docs_root else None
            walkthrough_id, export = generate_walkthrough(doc, args.library, args.version or "", docs_root=docs_root)
    except (GenerationError, UnicodeDecodeError, ValueError) as exc:
        raise CommandError(f"could not generate a walkthrough from {doc}: {exc}") from None
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    target = output / f"{walkthrough_id}.json"
    write_text_atomically(target, json.dumps(export, indent=2, ensure_ascii=False))
    print(f"{target}: {len(export['steps'])} steps — {export['walkthrough']['title']}")
    return 0


def command_mcp_server(server_args):
    from stackbench.auditing.step_server import main as serve

    serve(server_args)


def build_parser():
    parser = argparse.ArgumentParser(prog="stackbench", description="Where your library's docs fail their readers.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = commands.add_parser("import", help="import walkthrough exports and result files (or folders of them)")
    p.add_argument("paths", nargs="+", help="files or folders")
    p.add_argument("--library", help="library for walkthrough exports that do not name one")
    p.set_defaults(handler=command_import)

    p = commands.add_parser("up", help="migrate, load sample data, and run the web app with a worker")
    p.add_argument("--host", default=settings.STACKBENCH_HOST)
    p.add_argument("--port", type=int, default=settings.STACKBENCH_PORT)
    p.add_argument("--workers", type=int, default=settings.STACKBENCH_WORKERS, help="worker processes for runs")
    p.add_argument("--no-sample", action="store_true", help="do not load the sample data")
    p.set_defaults(handler=command_up)

    p = commands.add_parser("worker", help="run a Celery worker for runs")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--queues", default="celery")
    p.add_argument("--beat", action="store_true", help="also run the periodic recovery of dead runs (one worker)")
    p.set_defaults(handler=command_worker)
    walkthrough = commands.add_parser("walkthrough", help="audit walkthroughs").add_subparsers(
        dest="walkthrough_command", required=True, metavar="COMMAND"
    )
    p = walkthrough.add_parser("audit", help="follow a walkthrough step by step and report its gaps")
    p.add_argument("-w", "--walkthrough", required=True, help="walkthrough export (wt_<id>.json)")
    p.add_argument("-l", "--library", help="library name (default: from the walkthrough or the stored library)")
    p.add_argument("-v", "--version", help="library version (default: from the walkthrough or the stored library)")
    p.add_argument(
        "-o", "--output", default="audit_results", help="folder for the audit files (default: audit_results)"
    )
    p.add_argument("--working-dir", help="folder to follow the steps in (default: a throwaway folder)")
    p.add_argument("--backend", choices=["rules", "claude"], default="rules")
    p.add_argument("--timeout", type=float, help="seconds each command may take (default: 120)")
    p.set_defaults(handler=command_audit)

    p = walkthrough.add_parser("generate", help="turn a tutorial page into a walkthrough export")
    p.add_argument("--doc-path", required=True, help="the tutorial page (markdown)")
    p.add_argument("-l", "--library", required=True)
    p.add_argument("-v", "--version", default="")
    p.add_argument("-o", "--output", default=".", help="folder for wt_<hash>.json (default: here)")
    p.add_argument("--docs-root", help="the docs folder included files are looked up from (default: the page's folder)")
    p.add_argument("--backend", choices=["rules", "claude"], default="rules")
    p.set_defaults(handler=command_generate)

    p = commands.add_parser("validate", help="run every code example in a fresh virtualenv")
    p.add_argument("--extraction", required=True, help="folder of <doc>_analysis.json files")
    p.add_argument("--output", required=True, help="folder for <doc>_validation.json and validation_summary.json")
    p.add_argument("--num-workers", type=int, help="documents validated at once (default: number of cores)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds each example may run (default: 30)")
    p.add_argument("--find-links", action="append", default=[], help="a folder of wheels to install from")
    p.add_argument("--no-index", action="store_true", help="install only from --find-links (offline)")
    p.set_defaults(handler=command_validate)

    p = commands.add_parser("extract", help="extract the code examples of a docs folder into *_analysis.json")
    p.add_argument("--docs", required=True, help="the docs folder")
    p.add_argument("--include", help="only pages matching this glob (relative to the folder), e.g. 'guide/*.md'")
    p.add_argument("--library", required=True)
    p.add_argument("--version", default="")
    p.add_argument("--output", required=True)
    p.set_defaults(handler=command_extract)

    p = commands.add_parser("gate", help="fail a CI job on new or regressed problems of a run")
    p.add_argument("--run", type=int, required=True, help="run id")
    p.add_argument(
        "--fail-on",
        default=DEFAULT_GATE_LEVEL,
        choices=list(GATE_LEVELS),
        help="open-LEVEL: any problem of the run at or above LEVEL that is not triaged away (default "
        f"{DEFAULT_GATE_LEVEL}); new-LEVEL: only problems new or regressed in this run",
    )
    p.add_argument("--url", help="the dashboard's URL (default: this machine's database; env STACKBENCH_URL)")
    p.add_argument("--token", help="an API token (env STACKBENCH_TOKEN)")
    p.set_defaults(handler=command_gate)

    p = commands.add_parser("user", help="create or update a user with a role")
    p.add_argument("username")
    p.add_argument("--role", required=True, choices=["viewer", "triager", "maintainer"])
    p.add_argument("--email")
    p.add_argument("--password", help="default: a generated one for new users, printed once")
    p.set_defaults(handler=command_user)

    p = commands.add_parser("token", help="issue an API token for a user (printed once)")
    p.add_argument("--user", required=True)
    p.add_argument("--name", default="ci")
    p.set_defaults(handler=command_token)

    # Listed for --help; its arguments belong to the server (see main).
    commands.add_parser("mcp-server", help="run the MCP step server on stdio (--help for its options)", add_help=False)
    commands.add_parser(
        "present-server", help="run the MCP server agents present code walkthroughs with", add_help=False
    )
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["mcp-server"]:
        return command_mcp_server(argv[1:]) or 0
    if argv[:1] == ["present-server"]:
        from walkthroughs.present_server import main as serve_presentations

        return serve_presentations(argv[1:]) or 0
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args) or 0
    except CommandError as exc:
        print(f"stackbench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
