"""What docs are read from: a library and its docs, the walkthroughs made from its tutorials (steps, snippets,
revisions), its doc pages and their code examples, presented Symposium walkthroughs and readers' feedback.

One module past 500 lines, on purpose: every model here hangs off Library, and the querysets that filter them
read each other's fields; split, they would import each other."""

import hashlib
import json
import os
import posixpath
from pathlib import Path

from django.conf import settings
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone

from stackbench.formats.symposium import SymposiumWalkthrough, parse_walkthrough
from stackbench.formats.walkthrough import CodeExample as CodeExampleFormat
from stackbench.formats.walkthrough import ExtractionAnalysis, WalkthroughExport
from stackbench.lib.git import GitError, git, is_remote, is_repository
from stackbench.lib.jsonfiles import FormatError
from stackbench.lib.markdown import fenced_blocks
from stackbench.lib.snippets import code_hash


def content_hash(data) -> str:
    """A stable hash of a JSON value: key order and whitespace do not change it."""
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class Backend(models.TextChoices):
    RULES = "rules", "Rule-based (offline)"
    CLAUDE = "claude", "Claude agent"


class Network(models.TextChoices):
    REGISTRIES = "registries", "The internet, without the worker's host and private networks (registries reachable)"
    NONE = "none", "None"


DEFAULT_WALKTHROUGH_PATTERN = r"(tutorial|quickstart|quick-start|getting[-_]started|walkthrough|how-?to)"


class LibraryQuerySet(models.QuerySet):
    def by_name(self, name):
        return self.filter(name__iexact=name)


class Library(models.Model):
    name = models.CharField(max_length=200, unique=True)
    pypi_name = models.CharField(max_length=200, blank=True, help_text="Package to install; defaults to the name.")
    default_version = models.CharField(max_length=100, blank=True)
    docs_repo = models.CharField(
        max_length=500,
        blank=True,
        help_text="The docs git repository: a git URL (https://…, git://…, file://…) the worker clones and fetches, "
        "or a folder on the server.",
    )
    docs_branch = models.CharField(
        max_length=200, blank=True, help_text="The branch to follow for a git URL (empty: its default branch)."
    )
    docs_folder = models.CharField(max_length=300, blank=True, help_text="Folder of the docs inside the repository.")
    default_backend = models.CharField(max_length=20, choices=Backend.choices, default=Backend.RULES)
    python_version = models.CharField(
        max_length=20,
        blank=True,
        help_text="The Python a reader of these docs has, e.g. 3.11 (empty: the newest on the worker).",
    )
    network = models.CharField(
        max_length=20,
        choices=Network.choices,
        default=Network.REGISTRIES,
        help_text="What a reader's machine can reach while following the docs.",
    )
    walkthrough_pattern = models.CharField(
        max_length=200,
        default=DEFAULT_WALKTHROUGH_PATTERN,
        help_text="Docs pages whose path matches this regular expression are tutorials: each becomes a walkthrough.",
    )
    docs_commit = models.CharField(max_length=64, blank=True, help_text="The docs commit of the last sync.")
    synced_at = models.DateTimeField(null=True, blank=True)
    sync_report = models.JSONField(default=dict, blank=True)
    sync_requested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = LibraryQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "libraries"
        permissions = [("manage_library", "Can manage libraries and upload files")]

    def __str__(self):
        return self.name

    @property
    def sync_pending(self) -> bool:
        """A sync was asked for and has not finished (nor failed) since."""
        if self.sync_requested_at is None:
            return False
        finished = self.synced_at is not None and self.synced_at >= self.sync_requested_at
        failed = self.sync_report.get("error_at", "") >= self.sync_requested_at.isoformat()
        return not (finished or failed)

    def request_sync(self):
        self.sync_requested_at = timezone.now()
        Library.objects.filter(pk=self.pk).update(sync_requested_at=self.sync_requested_at)

    def get_absolute_url(self):
        return reverse("library", args=[self.pk])

    def docs_asset_base(self, page: str) -> str:
        """Where relative images of a docs page are served from ("" when the library has no docs folder)."""
        if not self.docs_repo or not page:
            return ""
        folder = posixpath.dirname(page)
        root = reverse("library_docs_file", args=[self.pk, "-"]).removesuffix("-")
        return root + (folder + "/" if folder else "")

    @property
    def package_name(self):
        return self.pypi_name or self.name

    @property
    def checkout_path(self) -> Path | None:
        """The docs repository on this machine: the folder given, or the worker's checkout of the git URL."""
        if not self.docs_repo:
            return None
        if is_remote(self.docs_repo):
            return Path(settings.STACKBENCH_CHECKOUTS_DIR) / f"library-{self.pk}"
        return Path(self.docs_repo)

    @property
    def docs_path(self) -> Path | None:
        return self.checkout_path / self.docs_folder if self.docs_repo else None

    def current_docs_commit(self) -> str:
        """The docs checkout's HEAD now (what a run starting now reads), else the last synced commit."""
        if self.docs_repo:
            try:
                return git(self.checkout_path, "rev-parse", "HEAD").strip()
            except GitError:
                pass
        return self.docs_commit

    @classmethod
    def for_name(cls, name, version=""):
        """The library called name, created on first sight; a version fills an empty default."""
        library = cls.objects.by_name(name).first()
        if library is None:
            library = cls.objects.create(name=name, default_version=version or "")
        elif version and not library.default_version:
            library.default_version = version
            library.save(update_fields=["default_version"])
        return library


class WalkthroughQuerySet(models.QuerySet):
    def for_library(self, library):
        return self.filter(library=library)

    def active(self):
        return self.filter(archived=False)


class Walkthrough(models.Model):
    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="walkthroughs")
    walkthrough_id = models.CharField(max_length=200, unique=True, help_text="The export's file stem.")
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    type = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=100, blank=True)
    tags = models.JSONField(default=list, blank=True)
    estimated_minutes = models.PositiveIntegerField(null=True, blank=True)
    original_doc_path = models.TextField(blank=True)
    source = models.JSONField(null=True, blank=True, help_text="The export exactly as imported.")
    content_hash = models.CharField(max_length=64, blank=True)
    archived = models.BooleanField(default=False)
    imported_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = WalkthroughQuerySet.as_manager()

    class Meta:
        ordering = ["title"]

    def __str__(self):
        return self.title

    def get_absolute_url(self):
        return reverse("walkthrough", args=[self.pk])

    @property
    def has_steps(self):
        return self.source is not None

    def export_json(self) -> str:
        return json.dumps(self.source, indent=2, ensure_ascii=False)

    @classmethod
    def placeholder(cls, walkthrough_id, library, title):
        """A walkthrough known only from a result file; importing its export later fills it in."""
        walkthrough, _ = cls.objects.get_or_create(
            walkthrough_id=walkthrough_id, defaults={"library": library, "title": title or walkthrough_id}
        )
        return walkthrough

    @classmethod
    @transaction.atomic
    def store_export(cls, walkthrough_id: str, library: Library, export: WalkthroughExport, raw: dict):
        """Create or update from an export. Returns (walkthrough, outcome) with outcome created/updated/unchanged.
        A changed export keeps the previous version as a revision."""
        digest = content_hash(raw)
        walkthrough = cls.objects.select_for_update().filter(walkthrough_id=walkthrough_id).first()
        if walkthrough and walkthrough.content_hash == digest:
            return walkthrough, "unchanged"
        outcome = "updated" if walkthrough and walkthrough.source is not None else "created"
        if walkthrough is None:
            walkthrough = cls(walkthrough_id=walkthrough_id, library=library)
        elif walkthrough.source is not None:
            walkthrough.revisions.create(content_hash=walkthrough.content_hash, source=walkthrough.source)
        info = export.walkthrough
        walkthrough.title = info.title
        walkthrough.description = info.description
        walkthrough.type = info.type
        walkthrough.status = info.status
        walkthrough.tags = info.tags
        walkthrough.estimated_minutes = info.estimatedDurationMinutes
        walkthrough.original_doc_path = export.original_doc_path
        walkthrough.source = raw
        walkthrough.content_hash = digest
        walkthrough.updated_at = timezone.now()
        walkthrough.save()
        walkthrough.steps.all().delete()
        steps = Step.objects.bulk_create(
            Step.from_export(walkthrough, position, step)
            for position, step in enumerate(export.ordered_steps(), start=1)
        )
        Snippet.objects.bulk_create(
            Snippet(step=step, code_hash=digest) for step in steps for digest in step.snippet_hashes()
        )
        return walkthrough, outcome


class WalkthroughRevision(models.Model):
    walkthrough = models.ForeignKey(Walkthrough, on_delete=models.CASCADE, related_name="revisions")
    content_hash = models.CharField(max_length=64)
    source = models.JSONField()
    replaced_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-replaced_at"]


class Step(models.Model):
    walkthrough = models.ForeignKey(Walkthrough, on_delete=models.CASCADE, related_name="steps")
    position = models.PositiveIntegerField(help_text="1-based position in displayOrder order.")
    display_order = models.IntegerField()
    title = models.CharField(max_length=500)
    content_for_user = models.TextField(blank=True)
    context_for_agent = models.TextField(blank=True)
    operations_for_agent = models.TextField(blank=True)
    introduction_for_agent = models.TextField(blank=True)
    next_step_reference = models.IntegerField(null=True, blank=True)
    metadata = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["walkthrough", "position"]
        constraints = [models.UniqueConstraint(fields=["walkthrough", "position"], name="unique_step_position")]

    def __str__(self):
        return f"{self.position}. {self.title}"

    def snippet_hashes(self) -> set[str]:
        """The code blocks this step shows, by the same hash code examples carry."""
        return {code_hash(block.content) for block in fenced_blocks(self.content_for_user) if block.content.strip()}

    @classmethod
    def from_export(cls, walkthrough, position, step):
        fields = step.contentFields
        return cls(
            walkthrough=walkthrough,
            position=position,
            display_order=step.displayOrder,
            title=step.title,
            content_for_user=fields.contentForUser,
            context_for_agent=fields.contextForAgent,
            operations_for_agent=fields.operationsForAgent,
            introduction_for_agent=fields.introductionForAgent,
            next_step_reference=step.nextStepReference,
            metadata=step.metadata,
        )


class Snippet(models.Model):
    """A code block a walkthrough step shows: links audit gaps and code-example failures about the same code."""

    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="snippets")
    code_hash = models.CharField(max_length=16, db_index=True)


class DocPageQuerySet(models.QuerySet):
    def for_library(self, library):
        return self.filter(library=library)


# The page-level extra fields of an extraction analysis, kept together on the page.
READER_SETUP_FIELDS = (
    "setup",
    "requirements",
    "environment",
    "files",
    "prose_names",
    "docs_requirements",
    "file_commands",
    "docs_file_commands",
    "test_options",
    "docs_installs",
    "docs_aliases",
)


class DocPage(models.Model):
    """A documentation page and its code examples, from an extraction analysis file."""

    library = models.ForeignKey(Library, on_delete=models.CASCADE, related_name="doc_pages")
    page = models.CharField(max_length=500)
    version = models.CharField(max_length=100, blank=True)
    language = models.CharField(max_length=50, default="python")
    source = models.JSONField(null=True, blank=True, help_text="The analysis file exactly as imported.")
    content_hash = models.CharField(max_length=64, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    reader_setup = models.JSONField(
        default=dict, blank=True, help_text="What a reader sets up: hidden setup, installs, variables, files."
    )
    docs_commit = models.CharField(max_length=64, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = DocPageQuerySet.as_manager()

    class Meta:
        ordering = ["library", "page"]
        constraints = [models.UniqueConstraint(fields=["library", "page"], name="unique_doc_page")]

    def __str__(self):
        return self.page

    def get_absolute_url(self):
        return reverse("doc_page", args=[self.pk])

    def analysis(self) -> ExtractionAnalysis:
        """This page as an extraction analysis, the validator's input."""
        return ExtractionAnalysis(
            page=self.page,
            library=self.library.package_name,
            version=self.version or self.library.default_version or None,
            language=self.language,
            examples=[example.to_format(self.library.package_name) for example in self.examples.all()],
            processed_at=self.processed_at,
            warnings=self.warnings,
            **(self.reader_setup or {}),
        )

    @classmethod
    @transaction.atomic
    def store_analysis(cls, library: Library, analysis: ExtractionAnalysis, raw: dict | None, docs_commit=""):
        """Create or update a page from an analysis. Returns (page, outcome): created/updated/unchanged."""
        # When the page was extracted here, when it was extracted is not part of what it says.
        digest = content_hash(raw if raw is not None else analysis.model_dump(mode="json", exclude={"processed_at"}))
        page = cls.objects.select_for_update().filter(library=library, page=analysis.page).first()
        if page and page.content_hash == digest:
            return page, "unchanged"
        outcome = "updated" if page else "created"
        page = page or cls(library=library, page=analysis.page)
        page.version = analysis.version or ""
        page.language = analysis.language
        page.source = raw
        page.content_hash = digest
        page.processed_at = analysis.processed_at
        page.warnings = analysis.warnings
        page.reader_setup = analysis.model_dump(mode="json", include=set(READER_SETUP_FIELDS))
        page.docs_commit = docs_commit or page.docs_commit
        page.updated_at = timezone.now()
        page.save()
        page.examples.all().delete()
        CodeExample.objects.bulk_create(
            CodeExample.from_format(page, index, example) for index, example in enumerate(analysis.examples)
        )
        return page, outcome


class CodeExample(models.Model):
    doc_page = models.ForeignKey(DocPage, on_delete=models.CASCADE, related_name="examples")
    index = models.PositiveIntegerField()
    language = models.CharField(max_length=50, default="python")
    code = models.TextField()
    imports = models.JSONField(null=True, blank=True)
    has_main = models.BooleanField(default=False)
    is_executable = models.BooleanField(default=True)
    execution_context = models.CharField(max_length=20, default="sync")
    line = models.PositiveIntegerField(default=0)
    context = models.TextField(blank=True)
    dependencies = models.JSONField(default=list, blank=True)
    section_hierarchy = models.JSONField(default=list, blank=True)
    markdown_anchor = models.TextField(null=True, blank=True)
    code_block_index = models.PositiveIntegerField(default=0)
    snippet_source = models.TextField(null=True, blank=True)
    style = models.CharField(max_length=20, null=True, blank=True, help_text="script, doctest, output, shell, ...")
    skip_reason = models.TextField(null=True, blank=True)
    expected_output = models.TextField(null=True, blank=True)
    expected_output_line = models.PositiveIntegerField(null=True, blank=True)
    doctest_groups = models.JSONField(default=list, blank=True, help_text="sphinx.ext.doctest groups of the block")
    shown_indent = models.PositiveIntegerField(default=0, help_text="indentation every line has on the page")
    named_python = models.CharField(max_length=20, null=True, blank=True, help_text="Python the page names near it")
    readers_names = models.JSONField(default=list, blank=True, help_text="names the prose calls the reader's own")
    named_in_prose = models.JSONField(default=list, blank=True, help_text="bare names the prose around it sets in code")
    expected_exception = models.CharField(
        max_length=200, null=True, blank=True, help_text="the exception the page says it raises"
    )
    expected_exception_line = models.PositiveIntegerField(
        null=True, blank=True, help_text="the page line the page says raises it"
    )
    builds_on_earlier = models.BooleanField(
        default=False, help_text="a sentence before it says it builds on what earlier blocks define"
    )
    package_init = models.CharField(
        max_length=200, null=True, blank=True, help_text="the reader's package whose __init__.py the page says it is"
    )
    output_pictured = models.BooleanField(
        default=False, help_text="the page shows what it prints as a picture right after it"
    )

    class Meta:
        ordering = ["doc_page", "index"]
        constraints = [models.UniqueConstraint(fields=["doc_page", "index"], name="unique_example_index")]

    def __str__(self):
        return f"{self.doc_page.page} #{self.index}"

    @classmethod
    def from_format(cls, doc_page, index, example: CodeExampleFormat):
        return cls(doc_page=doc_page, index=index, **example.model_dump(exclude={"library"}))

    def to_format(self, library_name: str) -> CodeExampleFormat:
        return CodeExampleFormat(
            library=library_name,
            **{field: getattr(self, field) for field in CodeExampleFormat.model_fields if field != "library"},
        )


class PresentError(ValueError):
    """A walkthrough that cannot be presented; the message says why."""


def allowed_repo_roots() -> list[Path]:
    """Where repositories people name may lie: the configured roots and the worker's checkouts of docs URLs."""
    roots = [Path(p) for p in settings.STACKBENCH_REPO_ROOTS] + [Path(settings.STACKBENCH_CHECKOUTS_DIR)]
    return [Path(os.path.realpath(root)) for root in roots]


def repository_refusal(location: str | Path) -> str | None:
    """Why a folder may not serve as a repository people read through us, or None: it must lie under an allowed
    root and must not hold the app's own folder or its var/ (secrets, the database)."""
    folder = Path(os.path.realpath(location))
    own = [Path(os.path.realpath(settings.BASE_DIR)), Path(os.path.realpath(settings.VAR_DIR))]
    if any(protected.is_relative_to(folder) for protected in own):
        return f"{location} holds Stackbench's own files; name a docs repository"
    if not any(folder.is_relative_to(root) for root in allowed_repo_roots()):
        roots = ", ".join(str(root) for root in allowed_repo_roots())
        return f"{location} is not under the repository roots of this server ({roots}; see STACKBENCH_REPO_ROOTS)"
    return None


class PresentedWalkthroughQuerySet(models.QuerySet):
    def current(self):
        return self.filter(archived_at__isnull=True)


class PresentedWalkthrough(models.Model):
    """A Symposium code walkthrough an agent (or a person) presented, with the repository it talks about."""

    title = models.CharField(max_length=300)
    library = models.ForeignKey(Library, null=True, blank=True, on_delete=models.SET_NULL, related_name="presentations")
    repo_path = models.CharField(max_length=500, help_text="The git repository its comments and diffs refer to.")
    source = models.JSONField(help_text="The walkthrough, validated and normalized to the JSON form.")
    source_format = models.CharField(max_length=20, default="json")
    source_text = models.TextField(blank=True, help_text="The markdown form exactly as given, when it came that way.")
    chosen_locations = models.JSONField(default=dict, blank=True, help_text="Comment key -> the match a person picked.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)
    archived_at = models.DateTimeField(null=True, blank=True)

    objects = PresentedWalkthroughQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return self.title

    def get_absolute_url(self):
        return reverse("presented", args=[self.pk])

    def walkthrough(self) -> SymposiumWalkthrough:
        return SymposiumWalkthrough.model_validate(self.source)

    @classmethod
    def present(cls, source, repo_path: str, user=None, library=None, name="walkthrough") -> "PresentedWalkthrough":
        """Validate and store a walkthrough (JSON text or object, or the markdown form) for a repository."""
        if isinstance(source, str):
            source = source.replace("\0", "\ufffd")  # PostgreSQL text cannot hold NUL
        try:
            walkthrough, form = parse_walkthrough(source, name)
        except FormatError as exc:
            raise PresentError(str(exc)) from None
        repo = Path(os.path.realpath(repo_path or "."))
        refusal = repository_refusal(repo)
        if refusal:
            raise PresentError(refusal)
        if not is_repository(repo):
            raise PresentError(f"{repo_path} is not a git repository")
        return cls.objects.create(
            title=walkthrough.title(),
            library=library,
            repo_path=str(repo),
            created_by=user,
            source=walkthrough.model_dump(mode="json", exclude_none=True),
            source_format=form,
            source_text=source if form == "markdown" else "",
        )

    def choose_location(self, comment_key: str, match_label: str):
        PresentedWalkthrough.objects.filter(pk=self.pk).update(
            chosen_locations={**self.chosen_locations, comment_key: match_label}
        )
        self.chosen_locations[comment_key] = match_label

    def clear(self):
        if self.archived_at is None:
            self.archived_at = timezone.now()
            self.save(update_fields=["archived_at"])


class Feedback(models.Model):
    """What the docs team sent back: a reply to a comment, or an action button clicked."""

    class Kind(models.TextChoices):
        REPLY = "reply", "Reply"
        ACTION = "action", "Action"

    walkthrough = models.ForeignKey(PresentedWalkthrough, on_delete=models.CASCADE, related_name="feedback")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    element_key = models.CharField(max_length=100, blank=True)
    text = models.TextField()  # what the agent receives (a reply wrapped with its comment's context)
    message = models.TextField(blank=True)  # what the person wrote, as people see it
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self):
        return f"{self.kind}: {self.text[:60]}"
