"""The input file family of formats.md: the walkthrough export, the gap and session files the MCP step server
writes, and the extraction analysis (a doc page's code examples). Field names are exact; files from the existing
tool chain load unchanged."""

from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, computed_field, model_validator

from stackbench.lib.clock import utcnow
from stackbench.lib.severity import SeverityScale

GapType = Literal["clarity", "prerequisite", "logical_flow", "execution_error", "completeness", "cross_reference"]
GAP_TYPES: tuple[str, ...] = get_args(GapType)
# critical blocks progress; warning confuses or costs extra work; info is a minor improvement.
GapSeverity = Literal["critical", "warning", "info"]
GAP_SEVERITY = SeverityScale(get_args(GapSeverity))


def _as_utc(value: datetime) -> datetime:
    # The existing tools write naive local timestamps (datetime.now().isoformat()); read them as UTC.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


Timestamp = Annotated[datetime, AfterValidator(_as_utc)]

# Names, versions and titles are stored in bounded columns: a longer one is a malformed file, refused by field.
NAME_MAX = 200
ShortText = Annotated[str, Field(max_length=100)]
Name = Annotated[str, Field(max_length=NAME_MAX)]
Label = Annotated[str, Field(max_length=500)]
# Every integer of every file is bounded: a stored number must fit the database's integer column (PostgreSQL's is
# 32-bit), or one huge value would fail a whole import halfway.
INT_MAX = 2**31 - 1
Count = Annotated[int, Field(ge=0, le=INT_MAX)]
Order = Annotated[int, Field(ge=-INT_MAX, le=INT_MAX)]
Milliseconds = Annotated[int, Field(ge=0, le=2**53)]  # epoch milliseconds (createdAt, updatedAt)


def _file_stem(value: str) -> str:
    # Walkthrough ids name files (<id>_session.json, <id>_audit.json).
    if any(character in value for character in "/\\\0") or value in (".", ".."):
        raise ValueError("a walkthrough id cannot contain a path separator or NUL, nor be . or ..")
    return value


WalkthroughId = Annotated[str, Field(min_length=1, max_length=NAME_MAX), AfterValidator(_file_stem)]


class _Lenient(BaseModel):
    # Files from other tools carry extra keys we do not use; keep reading them.
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class ContentFields(_Lenient):
    version: str = "v1"
    contentForUser: str = ""
    contextForAgent: str = ""
    operationsForAgent: str = ""
    introductionForAgent: str = ""


class ExportStep(_Lenient):
    title: Label = Field(min_length=1)
    displayOrder: Order
    createdAt: Milliseconds | None = None
    updatedAt: Milliseconds | None = None
    metadata: dict[str, Any] | None = None
    nextStepReference: Order | None = None
    contentFields: ContentFields


class WalkthroughInfo(_Lenient):
    title: Label = Field(min_length=1)
    description: str = ""
    type: ShortText = ""
    status: ShortText = ""
    createdAt: Milliseconds | None = None
    updatedAt: Milliseconds | None = None
    estimatedDurationMinutes: Count | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] | None = None


class WalkthroughExport(_Lenient):
    version: str = "1.0"
    exportedAt: str | None = None
    walkthrough: WalkthroughInfo
    steps: list[ExportStep] = Field(min_length=1)
    metadata: dict[str, Any] | None = None

    def ordered_steps(self) -> list[ExportStep]:
        """Steps by displayOrder; real files number from 0 or from 1, so position is what counts."""
        return sorted(self.steps, key=lambda step: step.displayOrder)

    @property
    def original_doc_path(self) -> str:
        return str((self.metadata or {}).get("originalDocPath") or "")


class Gap(_Lenient):
    step_number: Count
    step_title: Label = ""
    gap_type: GapType
    severity: GapSeverity
    description: str = Field(min_length=1)
    suggested_fix: str | None = None
    context: str | None = None
    timestamp: Timestamp = Field(default_factory=utcnow)


class Session(_Lenient):
    walkthrough_id: WalkthroughId | Literal[""] = ""
    walkthrough_path: str
    current_step: Count
    total_steps: Count = 0
    completed_steps: Count = 0
    is_complete: bool = False
    gaps: list[Gap] = Field(default_factory=list)
    session_started: Timestamp
    last_updated: Timestamp | None = None


def walkthrough_id_for(path: Path | str) -> str:
    """The walkthrough id is the file stem: wt_ab12cd34.json -> wt_ab12cd34."""
    return Path(path).stem


def session_path_for(walkthrough_path: Path | str, output_dir: Path | str | None = None) -> Path:
    walkthrough_path = Path(walkthrough_path)
    folder = Path(output_dir) if output_dir else walkthrough_path.parent
    return folder / f"{walkthrough_path.stem}_session.json"


Language = Annotated[str, Field(max_length=50)]
ExecutionContext = Literal["sync", "async", "not_executable"]
# How a block is read: a program (tagged Python, or an untagged fence that is one), a doctest session (>>>
# prompts), a test module the reader runs with pytest, the output another block shows, shell commands, a file the
# reader writes, or anything else.
ExampleStyle = Literal["script", "untagged", "doctest", "tests", "output", "shell", "file", "other"]
RUNNABLE_STYLES = ("script", "untagged", "doctest", "tests")


class CodeExample(_Lenient):
    library: Name = ""
    language: Language = "python"
    code: str
    imports: list[str] | str | None = None
    has_main: bool = False
    is_executable: bool = True
    execution_context: ExecutionContext = "sync"
    line: Count = 0
    context: str = ""
    dependencies: list[str] = Field(default_factory=list)
    section_hierarchy: list[str] = Field(default_factory=list)
    markdown_anchor: str | None = None
    code_block_index: Count = 0
    snippet_source: str | None = None
    # Extra fields (files of the existing tools have none; read as "decide from the code"):
    style: ExampleStyle | None = None
    skip_reason: str | None = None  # why a not-executable example is not run, in words a reader understands
    expected_output: str | None = None  # what the page says the example prints
    expected_output_line: Count | None = None  # where the page shows it (the output block), if not in the code
    readers_names: list[Name] = Field(default_factory=list)  # the prose around it calls these the reader's own
    named_in_prose: list[Name] = Field(default_factory=list)  # bare names the prose around it sets in code
    # The exception the page says the example raises ("Exception": one it does not name), and the page line of the
    # statement it says raises it (None: the page says so of the whole example).
    expected_exception: Name | None = None
    expected_exception_line: Count | None = None
    # The sphinx.ext.doctest groups the docs' own doctest run puts this block in (`.. doctest:: group`; "default"
    # without one); empty for a block that is no sphinx.ext.doctest directive.
    doctest_groups: list[str] = Field(default_factory=list)
    # The indentation every line of the block has on the page, which a reader pasting it gets too (an
    # IndentationError); the code is kept without it, so the example still runs and later ones get its names.
    shown_indent: Count = 0
    # For code in the syntax of a newer Python: the newest Python the page names near it ("3.12" for "on Python
    # 3.12+" in its section, its heading or its comments), which tells the reader which Python it needs.
    named_python: str | None = None
    # The page says the blocks from a sentence before this one on build on what earlier blocks define ("the
    # snippets below assume the `client` defined above"): its reader runs it after them, in one file.
    builds_on_earlier: bool = False
    # The reader's own package whose `__init__.py` the page says the block is ("at the top of your package's
    # `__init__.py`"): run as that module, as code that acts on the package it is in needs.
    package_init: Name | None = None
    # The page shows what the example prints as a picture right after it (a terminal screenshot): a statement it
    # shows no text for has nothing to be compared with.
    output_pictured: bool = False

    @model_validator(mode="before")
    @classmethod
    def _legacy_is_executable(cls, data: Any) -> Any:
        # Files written before execution_context existed only say is_executable: false.
        if isinstance(data, dict) and "execution_context" not in data and data.get("is_executable") is False:
            return {**data, "execution_context": "not_executable"}
        return data


class SetupCode(_Lenient):
    """Code the docs run, unseen, before their doctest sessions (sphinx.ext.doctest's testsetup blocks, before
    the blocks of their groups and from their place on the page on; doctest_global_setup, from the start), and
    imports the page's prose tells its reader to type (from their place on)."""

    code: str
    line: Count = 0
    source: str = ""
    # The sphinx.ext.doctest groups it sets up (`.. testsetup:: group`, "*" for all); empty: every example.
    groups: list[str] = Field(default_factory=list)


class PageRequirement(_Lenient):
    """A package the page tells its reader to install (`pip install "lib[extra]"`)."""

    requirement: str = Field(min_length=1, max_length=300)
    line: Count = 0


class PageVariable(_Lenient):
    """An environment variable the page tells its reader to set (`export NAME=value`), from its line on."""

    name: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    value: str
    line: Count = 0


class FileCommand(_Lenient):
    """A shell line that gives Python files to a program (`tool inventory.py deploy.py`): that program runs the
    reader's files itself, with what it sets up for them."""

    command: str = Field(min_length=1, max_length=500)
    program: str = Field(min_length=1, max_length=200)
    files: list[str] = Field(default_factory=list)
    line: Count = 0


class PageFile(_Lenient):
    """A file the page shows its reader to create (a fence titled with a file name, such as `.env`), or links for
    them to download (`url`, its content empty: fetched where the examples run)."""

    path: str = Field(min_length=1, max_length=500)
    content: str
    line: Count = 0
    url: str | None = Field(default=None, max_length=2000, pattern=r"^https?://")


class ExtractionAnalysis(_Lenient):
    page: Label = Field(min_length=1)
    library: Name = Field(min_length=1)
    version: ShortText | None = None
    language: Language = "python"
    signatures: list[Any] = Field(default_factory=list)
    examples: list[CodeExample] = Field(default_factory=list)
    processed_at: Timestamp | None = None
    warnings: list[str] = Field(default_factory=list)
    processing_time_ms: float | None = None
    # Extra fields: what a reader of the page sets up besides running its examples.
    setup: list[SetupCode] = Field(default_factory=list)
    requirements: list[PageRequirement] = Field(default_factory=list)
    environment: list[PageVariable] = Field(default_factory=list)
    files: list[PageFile] = Field(default_factory=list)
    # The words of the page's prose that could name a package, lowercased: a package the page never names is not
    # one its reader installs, even when the library asks for it (files of the existing tools have none: every
    # package they name is in an example's dependencies).
    prose_names: list[str] = Field(default_factory=list)
    # What the docs' installation pages and sections tell every reader to install (`pip install "lib[extra]"`): a
    # reader who followed them has it on this page too, when an example needs it.
    docs_requirements: list[str] = Field(default_factory=list)
    # What the page's own installation section installs, in page order: its shell blocks' lines and the
    # `pip install "lib[all]"` its sentences give in inline code (the docs' first line picks the library's extras).
    installation_lines: list[str] = Field(default_factory=list)
    # The shell lines of the page, and of every page of the docs (a CLI page), that give Python files to a program.
    file_commands: list[FileCommand] = Field(default_factory=list)
    docs_file_commands: list[FileCommand] = Field(default_factory=list)
    # The long options the page's pytest command lines give (`pytest --snapshot-update`): how its reader runs the
    # tests it shows.
    test_options: list[ShortText] = Field(default_factory=list)
    # The packages the page's prose says a feature needs installed ("requires `pydantic` to be installed"): its
    # reader installs them, and so does a reader of any other page of the docs using that feature.
    prerequisites: list[str] = Field(default_factory=list)
    # The first of each list of alternatives the page's installation section makes its reader choose among (one
    # item per extra of the library: `pip install lib[pyqt5]`, `pip install lib[pyside6]`), and those of every
    # installation page of the docs: a reader who followed them installed that one, and has it on every page.
    install_choices: list[str] = Field(default_factory=list)
    docs_installs: list[str] = Field(default_factory=list)
    # The names the docs import modules under (`import dataframely as dy` on any page: alias -> module): a reader
    # of a page that uses `dy` without importing it knows the line to add.
    docs_aliases: dict[str, str] = Field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def total_signatures(self) -> int:
        return len(self.signatures)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's typed form; mypy rejects decorated properties
    @property
    def total_examples(self) -> int:
        return len(self.examples)


def doc_name(page: str) -> str:
    """A page's name in file names: its path without the extension, folders joined with __ (for a page at the top
    of the docs, simply its stem, as the existing tools name it)."""
    return str(PurePosixPath(page).with_suffix("")).replace("/", "__")
