"""Validation's drivers: one document, on the first of the worker's Pythons its library installs on, and a set of
documents in parallel (the library installed once for them all), each document's result file written as soon as it
is done, then the summary."""

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from stackbench.formats.results import ExampleResult, ValidationResult, ValidationSummary, validation_file_name
from stackbench.formats.walkthrough import ExtractionAnalysis
from stackbench.lib.clock import utcnow
from stackbench.lib.jsonfiles import FormatError, load_model, write_model
from stackbench.sandbox.prerequisites import SandboxUnavailable
from stackbench.validation.document_sandbox import DocumentSandbox
from stackbench.validation.install_plan import library_requirement
from stackbench.validation.options import ValidationError, ValidationObserver, ValidationOptions
from stackbench.validation.page_validation import PageValidation
from stackbench.validation.prepared_venvs import PreparedVenvs


def validate_document(
    analysis: ExtractionAnalysis,
    options: ValidationOptions,
    observer: ValidationObserver | None = None,
    prepared: PreparedVenvs | None = None,
) -> ValidationResult:
    """One document's examples in one sandbox; with prepared (a batch's), its virtualenv starts as a copy of the
    one the library was installed in for the batch."""
    observer = observer or ValidationObserver()
    observer.document_started(analysis.page, len(analysis.examples))
    library_requirement(analysis)  # a broken analysis file is refused before any sandbox is made
    profiles = [options.sandbox.profile, *options.other_profiles]
    document = None
    results: list[ExampleResult] = []
    try:
        for number, profile in enumerate(profiles):
            page = PageValidation(analysis, options, observer)
            if not page.runnable and not page.listed:
                break
            on_profile = replace(options, sandbox=replace(options.sandbox, profile=profile))
            venv = (
                prepared.venv_for(library_requirement(analysis), on_profile, observer.should_stop) if prepared else None
            )
            try:
                document = DocumentSandbox(on_profile, Path(analysis.page).stem, observer.should_stop, venv)
            except SandboxUnavailable as exc:
                raise ValidationError(f"no sandbox for the examples of {analysis.page}: {exc}") from None
            page.prepare(document)
            if page.base_failed is None or not page.base_failed.wrong_python or number == len(profiles) - 1:
                break
            document.close()  # the library does not support this Python: the next one
            document = None
        if document is not None:
            observer.sandbox_ready(document.sandbox.describe())
        results = page.run(observer.should_stop)
    finally:
        if document is not None:
            document.close()
    result = page.result(results)
    observer.document_finished(analysis.page, result)
    return result


def load_analyses(folder: Path) -> tuple[list[ExtractionAnalysis], list[str]]:
    """Every *_analysis.json of a folder (extraction_summary.json is not one), and the errors of bad files."""
    analyses, problems = [], []
    for path in sorted(Path(folder).glob("*_analysis.json")):
        try:
            analyses.append(load_model(ExtractionAnalysis, path))
        except FormatError as exc:
            problems.append(str(exc))
    return analyses, problems


def validate_all(
    analyses: list[ExtractionAnalysis],
    output_dir: Path,
    options: ValidationOptions,
    observer: ValidationObserver | None = None,
) -> ValidationSummary:
    """Documents in parallel (up to num_workers), examples of one document in order, each library installed once
    per Python for them all; each document's file is written as soon as it is done, then the summary."""
    output_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for analysis in analyses:
        library_requirement(analysis)  # and before any page of the set runs

    prepared = PreparedVenvs(options.sandbox.scratch_dir)

    def one(analysis: ExtractionAnalysis) -> ValidationResult:
        document = validate_document(analysis, options, observer, prepared)
        write_model(output_dir / validation_file_name(analysis.page), document)
        return document

    try:
        with ThreadPoolExecutor(max_workers=max(1, options.num_workers)) as pool:
            documents = list(pool.map(one, analyses))
    finally:
        prepared.close()
    summary = ValidationSummary(
        timestamp=utcnow(),
        validation_duration_seconds=round(time.monotonic() - started, 3),
        num_workers=max(1, options.num_workers),
        documents=documents,
    )
    write_model(output_dir / "validation_summary.json", summary)
    return summary
