"""Import files written by the existing Stackbench tool chain (and by us): walkthrough exports, extraction
analyses, audit results with their session files and logs, validation results and summaries.

Each file is validated first and stored in one transaction, so a bad file stores nothing; importing the same
file twice finds it already there (runs and documents carry an import key derived from what identifies them)."""

import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from django.db import transaction

from audits.models import ExampleResult, Gap, Run, RunStatus, ValidationDocument, record_problems
from stackbench.formats.results import AuditResult, ValidationResult, ValidationSummary, validation_file_name
from stackbench.formats.walkthrough import NAME_MAX, ExtractionAnalysis, Session, WalkthroughExport, walkthrough_id_for
from stackbench.lib.jsonfiles import MAX_FILE_BYTES, FormatError, parse_json_text, parse_model, write_model
from walkthroughs.models import DocPage, Library, Walkthrough

UNASSIGNED_LIBRARY = "unassigned"
LOG_NAMES = ("audit.log", "audit_tools.jsonl")
KINDS = ("walkthrough", "extraction", "summary", "validation", "audit", "session")
KIND_LABELS = {
    "walkthrough": "walkthrough export",
    "extraction": "extraction analysis",
    "summary": "validation summary",
    "validation": "validation result",
    "audit": "audit result",
    "session": "session file",
}


@dataclass
class SourceFile:
    name: str
    data: Any
    explicit: bool = True

    @property
    def stem(self) -> str:
        return PurePosixPath(self.name).stem

    @property
    def folder(self) -> str:
        return str(PurePosixPath(self.name).parent)


@dataclass
class ImportOutcome:
    name: str
    kind: str
    status: str  # created, updated, unchanged, duplicate, skipped, error
    message: str = ""
    url: str = ""

    @property
    def ok(self):
        return self.status != "error"


@dataclass
class FileSet:
    """What one import looks at: parsed JSON files, plus log files that travel with audit results."""

    files: list[SourceFile] = field(default_factory=list)
    logs: dict[str, bytes] = field(default_factory=dict)
    errors: list[ImportOutcome] = field(default_factory=list)

    def add_bytes(self, name: str, raw: bytes, explicit: bool):
        if PurePosixPath(name).name in LOG_NAMES:
            self.logs[name] = raw
            return
        if len(raw) > MAX_FILE_BYTES:
            self.errors.append(
                ImportOutcome(name, "", "error", f"{len(raw)} bytes is over the {MAX_FILE_BYTES} byte limit")
            )
            return
        try:
            self.files.append(SourceFile(name, parse_json_text(raw, name), explicit))
        except FormatError as exc:
            if explicit or name.endswith(".json"):
                self.errors.append(ImportOutcome(name, "", "error", str(exc)))

    def sibling(self, source: SourceFile, name: str) -> SourceFile | None:
        wanted = str(PurePosixPath(source.folder) / name)
        return next((f for f in self.files if f.name == wanted), None)

    def logs_beside(self, source: SourceFile) -> dict[str, bytes]:
        folder = PurePosixPath(source.folder) / "agent_logs"
        found = {}
        for log_name in LOG_NAMES:
            for candidate in (folder / log_name, PurePosixPath(source.folder) / log_name):
                if str(candidate) in self.logs:
                    found[log_name] = self.logs[str(candidate)]
                    break
        return found


def fileset_from_paths(paths) -> FileSet:
    fileset = FileSet()
    for raw_path in paths:
        path = Path(raw_path)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and (child.suffix == ".json" or child.name in LOG_NAMES):
                    _add_path(fileset, child, explicit=False)
        elif path.is_file():
            _add_path(fileset, path, explicit=True)
            logs = path.parent / "agent_logs"
            for log_name in LOG_NAMES:
                if (logs / log_name).is_file():
                    _add_path(fileset, logs / log_name, explicit=False)
        else:
            fileset.errors.append(ImportOutcome(str(path), "", "error", "no such file or folder"))
    return fileset


def _add_path(fileset: FileSet, path: Path, explicit: bool):
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            fileset.errors.append(
                ImportOutcome(str(path), "", "error", f"{size} bytes is over the {MAX_FILE_BYTES} byte limit")
            )
            return
        fileset.add_bytes(str(path), path.read_bytes(), explicit)
    except OSError as exc:
        fileset.errors.append(ImportOutcome(str(path), "", "error", f"cannot read ({exc.strerror})"))


def detect_kind(source: SourceFile) -> str | None:
    data, name = source.data, PurePosixPath(source.name).name
    if not isinstance(data, dict) or name == "extraction_summary.json":
        return None
    if "steps" in data and "walkthrough" in data:
        return "walkthrough"
    if "walkthrough_id" in data and "gaps" in data and "started_at" in data:
        return "audit"
    if "walkthrough_path" in data and "current_step" in data:
        return "session"
    if "documents" in data and "timestamp" in data:
        return "summary"
    if "results" in data and "page" in data:
        return "validation"
    if "examples" in data and "page" in data:
        return "extraction"
    return None


def import_paths(
    paths, library_name: str | None = None, user=None, on_file: Callable[[], None] | None = None
) -> list[ImportOutcome]:
    return import_fileset(fileset_from_paths(paths), library_name=library_name, user=user, on_file=on_file)


def import_fileset(
    fileset: FileSet, library_name: str | None = None, user=None, on_file: Callable[[], None] | None = None
) -> list[ImportOutcome]:
    """Imports every Stackbench file of the set, each in a transaction of its own; on_file is called after each
    file (for a progress bar)."""
    outcomes = list(fileset.errors)
    typed = []
    for source in fileset.files:
        kind = detect_kind(source)
        if kind is None:
            if on_file:
                on_file()
            if source.explicit:
                outcomes.append(
                    ImportOutcome(
                        source.name,
                        "",
                        "error",
                        "not a Stackbench file (expected one of: " + ", ".join(KIND_LABELS.values()) + ")",
                    )
                )
            else:
                outcomes.append(ImportOutcome(source.name, "", "skipped", "not a Stackbench file"))
            continue
        typed.append((KINDS.index(kind), kind, source))
    # Exports and analyses first, so results find their walkthroughs and pages; summaries before the
    # per-document files they contain.
    typed.sort(key=lambda item: (item[0], item[2].name))
    importer = _Importer(fileset, library_name, user)
    for _, kind, source in typed:
        outcomes.append(importer.run(kind, source))
        if on_file:
            on_file()
    return outcomes


def _key(*parts) -> str:
    return hashlib.sha256("|".join(str(p) for p in parts).encode()).hexdigest()


class _Importer:
    def __init__(self, fileset: FileSet, library_name: str | None, user):
        self.fileset = fileset
        self.library_name = library_name
        self.user = user
        self.consumed_sessions: set[str] = set()

    def run(self, kind: str, source: SourceFile) -> ImportOutcome:
        if kind == "session" and source.name in self.consumed_sessions:
            return ImportOutcome(source.name, kind, "skipped", "imported with its audit result")
        self.new_folders = []
        try:
            with transaction.atomic():
                return getattr(self, f"import_{kind}")(source)
        except FormatError as exc:
            self._remove_new_folders()
            return ImportOutcome(source.name, kind, "error", str(exc))
        except BaseException:
            self._remove_new_folders()
            raise

    def _remove_new_folders(self):
        for folder in self.new_folders:
            shutil.rmtree(folder, ignore_errors=True)

    def output_dir(self, run: Run) -> Path:
        folder = run.ensure_output_dir()
        self.new_folders.append(folder)
        return folder

    def library(self, name: str | None, version: str = "") -> Library:
        name = self.library_name or name or UNASSIGNED_LIBRARY
        if len(name) > NAME_MAX:
            raise FormatError(f"the library name is over {NAME_MAX} characters")
        return Library.for_name(name, version)

    def import_walkthrough(self, source: SourceFile) -> ImportOutcome:
        export = parse_model(WalkthroughExport, source.data, source.name)
        meta_library = (export.metadata or {}).get("library") or (export.walkthrough.metadata or {}).get("library")
        library = self.library(meta_library if isinstance(meta_library, str) else None)
        walkthrough_id = walkthrough_id_for(source.name)
        if len(walkthrough_id) > NAME_MAX:
            raise FormatError(f"{source.name}: a walkthrough id (the file name) is at most {NAME_MAX} characters")
        walkthrough, outcome = Walkthrough.store_export(walkthrough_id, library, export, source.data)
        return ImportOutcome(
            source.name,
            "walkthrough",
            outcome,
            f"{walkthrough.walkthrough_id}: {len(export.steps)} steps",
            walkthrough.get_absolute_url(),
        )

    def import_extraction(self, source: SourceFile) -> ImportOutcome:
        analysis = parse_model(ExtractionAnalysis, source.data, source.name)
        library = self.library(analysis.library, analysis.version or "")
        page, outcome = DocPage.store_analysis(library, analysis, source.data)
        return ImportOutcome(
            source.name,
            "extraction",
            outcome,
            f"{page.page}: {len(analysis.examples)} examples",
            page.get_absolute_url(),
        )

    def import_audit(self, source: SourceFile) -> ImportOutcome:
        audit = parse_model(AuditResult, source.data, source.name)
        session_source = self.fileset.sibling(source, f"{audit.walkthrough_id}_session.json")
        session = parse_model(Session, session_source.data, session_source.name) if session_source else None
        key = _key("audit", audit.walkthrough_id, audit.started_at.isoformat())
        existing = Run.objects.filter(import_key=key).first()
        if existing:
            return ImportOutcome(
                source.name,
                "audit",
                "duplicate",
                f"already imported as run #{existing.pk}",
                existing.get_absolute_url(),
            )
        library = self.library(audit.library_name, audit.library_version)
        walkthrough = Walkthrough.placeholder(audit.walkthrough_id, library, audit.walkthrough_title)
        run = Run.objects.record_import(
            library,
            key=key,
            started_at=audit.started_at,
            finished_at=audit.completed_at,
            walkthrough=walkthrough,
            version=audit.library_version,
            user=self.user,
            duration_seconds=audit.duration_seconds,
            progress_current=audit.completed_steps,
            progress_total=audit.total_steps,
        )
        Gap.objects.bulk_create(Gap(run=run, seq=seq, **Gap.fields_for(run, gap)) for seq, gap in enumerate(audit.gaps))
        folder = self.output_dir(run)
        write_model(folder / f"{audit.walkthrough_id}_audit.json", audit)
        if session:
            self.consumed_sessions.add(session_source.name)
            write_model(folder / f"{audit.walkthrough_id}_session.json", session)
        logs = self.fileset.logs_beside(source)
        if logs:
            (folder / "agent_logs").mkdir(exist_ok=True)
            for log_name, raw in logs.items():
                (folder / "agent_logs" / log_name).write_bytes(raw)
        run.record_output_files()
        record_problems(run)
        return ImportOutcome(
            source.name, "audit", "created", f"run #{run.pk}: {len(audit.gaps)} gaps", run.get_absolute_url()
        )

    def import_session(self, source: SourceFile) -> ImportOutcome:
        session = parse_model(Session, source.data, source.name)
        walkthrough_id = session.walkthrough_id or walkthrough_id_for(session.walkthrough_path)
        key = _key("session", walkthrough_id, session.session_started.isoformat())
        existing = Run.objects.filter(import_key=key).first()
        if existing:
            return ImportOutcome(
                source.name,
                "session",
                "duplicate",
                f"already imported as run #{existing.pk}",
                existing.get_absolute_url(),
            )
        walkthrough = Walkthrough.objects.filter(walkthrough_id=walkthrough_id).select_related("library").first()
        library = walkthrough.library if walkthrough and not self.library_name else self.library(None)
        walkthrough = walkthrough or Walkthrough.placeholder(walkthrough_id, library, walkthrough_id)
        status = RunStatus.SUCCEEDED if session.is_complete else RunStatus.FAILED
        error = (
            ""
            if session.is_complete
            else (
                f"The session stopped after step {session.current_step} of {session.total_steps or '?'}; "
                "only its session file was imported."
            )
        )
        run = Run.objects.record_import(
            library,
            key=key,
            started_at=session.session_started,
            finished_at=session.last_updated,
            walkthrough=walkthrough,
            user=self.user,
            status=status,
            error=error,
            progress_current=session.completed_steps,
            progress_total=session.total_steps,
        )
        Gap.objects.bulk_create(
            Gap(run=run, seq=seq, **Gap.fields_for(run, gap)) for seq, gap in enumerate(session.gaps)
        )
        folder = self.output_dir(run)
        write_model(folder / f"{walkthrough_id}_session.json", session)
        run.record_output_files()
        record_problems(run)
        return ImportOutcome(
            source.name, "session", "created", f"run #{run.pk}: {len(session.gaps)} gaps", run.get_absolute_url()
        )

    def import_validation(self, source: SourceFile) -> ImportOutcome:
        result = parse_model(ValidationResult, source.data, source.name)
        return self._store_validation_run(
            source,
            [result],
            _key("validation", *_document_key_parts(result)),
            timestamp=result.validation_timestamp,
            kind="validation",
        )

    def import_summary(self, source: SourceFile) -> ImportOutcome:
        summary = parse_model(ValidationSummary, source.data, source.name)
        if not summary.documents:
            return ImportOutcome(source.name, "summary", "skipped", "the summary lists no documents")
        key = _key(
            "summary", summary.timestamp.isoformat(), *sorted(_key(*_document_key_parts(d)) for d in summary.documents)
        )
        return self._store_validation_run(
            source,
            summary.documents,
            key,
            timestamp=summary.timestamp,
            kind="summary",
            duration=summary.validation_duration_seconds,
            summary=summary,
        )

    def _store_validation_run(self, source, documents, key, timestamp, kind, duration=None, summary=None):
        existing = Run.objects.filter(import_key=key).first()
        if existing:
            return ImportOutcome(
                source.name, kind, "duplicate", f"already imported as run #{existing.pk}", existing.get_absolute_url()
            )
        fresh = [
            d
            for d in documents
            if not ValidationDocument.objects.filter(import_key=_key(*_document_key_parts(d))).exists()
        ]
        if not fresh:
            first = ValidationDocument.objects.filter(import_key=_key(*_document_key_parts(documents[0]))).first()
            return ImportOutcome(
                source.name, kind, "duplicate", f"already imported in run #{first.run_id}", first.run.get_absolute_url()
            )
        library = self.library(fresh[0].library, fresh[0].version)
        run = Run.objects.record_import(
            library,
            key=key,
            started_at=timestamp,
            finished_at=timestamp,
            version=fresh[0].version,
            user=self.user,
            duration_seconds=duration,
            progress_current=sum(d.total_examples for d in fresh),
            progress_total=sum(d.total_examples for d in fresh),
        )
        folder = self.output_dir(run)
        for document in fresh:
            page = self._doc_page(document)
            run.doc_pages.add(page)
            stored = ValidationDocument.objects.create(
                run=run,
                doc_page=page,
                page=document.page,
                library_name=document.library,
                version=document.version,
                language=document.language,
                finished=True,
                import_key=_key(*_document_key_parts(document)),
                **ValidationDocument.outcome_fields(document),
            )
            ExampleResult.objects.bulk_create(
                ExampleResult(document=stored, example_index=r.example_index, **ExampleResult.fields_for(stored, r))
                for r in document.results
            )
            write_model(folder / validation_file_name(document.page), document)
        if summary is not None:
            write_model(folder / "validation_summary.json", summary)
        run.record_output_files()
        record_problems(run)
        skipped = len(documents) - len(fresh)
        note = f"; {skipped} document(s) already imported elsewhere" if skipped else ""
        examples = sum(d.total_examples for d in fresh)
        return ImportOutcome(
            source.name,
            kind,
            "created",
            f"run #{run.pk}: {len(fresh)} document(s), {examples} examples{note}",
            run.get_absolute_url(),
        )

    def _doc_page(self, document: ValidationResult) -> DocPage:
        """The stored page, or one rebuilt from the results when its analysis was never imported."""
        library = self.library(document.library, document.version)
        page = DocPage.objects.filter(library=library, page=document.page).first()
        if page:
            return page
        analysis = ExtractionAnalysis(
            page=document.page,
            library=document.library,
            version=document.version or None,
            language=document.language,
            examples=[{"code": r.code, "line": r.line, "context": r.context} for r in document.results],
        )
        page, _ = DocPage.store_analysis(library, analysis, None)
        return page


def _document_key_parts(document: ValidationResult):
    return ("document", document.library, document.page, document.version, document.validation_timestamp.isoformat())
