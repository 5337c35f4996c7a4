"""Sync a library with its docs repository: read the current commit, extract the code examples of every page,
and generate (or update, keeping history) a walkthrough for every tutorial page."""

import re

from django.utils import timezone

from stackbench.docs.extractor import extract_docs
from stackbench.formats.walkthrough import WalkthroughExport
from stackbench.generation.rules import generate_walkthrough
from stackbench.lib.git import GitError, clone_or_fetch, git, is_remote
from walkthroughs.models import DocPage, Library, Walkthrough, repository_refusal


class SyncError(Exception):
    """The docs could not be read; the message says why."""


def sync_docs(library: Library) -> dict:
    if not library.docs_repo:
        raise SyncError(f"{library.name} has no docs repository: set it in the library's settings")
    repo, docs = library.checkout_path, library.docs_path
    refusal = None if is_remote(library.docs_repo) else repository_refusal(repo)
    if refusal:
        raise SyncError(refusal)
    try:
        if is_remote(library.docs_repo):
            commit = clone_or_fetch(library.docs_repo, library.docs_branch, repo)
        else:
            commit = git(repo, "rev-parse", "HEAD").strip()
    except GitError as exc:
        raise SyncError(f"{library.docs_repo} could not be read: {exc}") from None
    if not docs.is_dir():
        raise SyncError(f"{docs} does not exist in the repository")
    version = library.default_version or None
    extraction = extract_docs(docs, library.package_name, version)
    pages = {"created": 0, "updated": 0, "unchanged": 0}
    for _, analysis in extraction.analyses:
        _, outcome = DocPage.store_analysis(library, analysis, None, docs_commit=commit)
        pages[outcome] += 1
    walkthroughs = {"created": 0, "updated": 0, "unchanged": 0}
    pattern = re.compile(library.walkthrough_pattern or "$^", re.IGNORECASE)
    for path in sorted(docs.rglob("*.md")):
        relative = path.relative_to(docs).as_posix()
        if not pattern.search(relative):
            continue
        try:
            generated_id, export = generate_walkthrough(
                path, library.package_name, library.default_version, original_path=relative, docs_root=docs
            )
        except (UnicodeDecodeError, ValueError) as exc:
            extraction.warnings.append(f"{relative}: no walkthrough ({exc})")
            continue
        existing = Walkthrough.objects.filter(library=library, original_doc_path=relative).first()
        walkthrough_id = existing.walkthrough_id if existing else generated_id
        _, outcome = Walkthrough.store_export(walkthrough_id, library, WalkthroughExport.model_validate(export), export)
        walkthroughs[outcome] += 1
    report = {
        "commit": commit,
        "pages": pages,
        "walkthroughs": walkthroughs,
        "warnings": extraction.warnings,
        "at": timezone.now().isoformat(),
    }
    Library.objects.filter(pk=library.pk).update(docs_commit=commit, synced_at=timezone.now(), sync_report=report)
    return report
