"""A batch's library installs, made once: the library (pinned, with the extras the page names) is installed once
per Python into a virtualenv the worker keeps, and each page's sandbox starts from a private copy of it instead of
installing it again.

The install runs in a sandbox of its own, where nothing but the installer runs (no page's code), and its virtualenv
is kept by the worker as the worker's own files once that sandbox's processes are gone: a page's code changes only
its own copy (venv_copies: copies are private down to the inode), never what the next page starts from. An install
that fails is not kept: the page then installs the library itself, and says why it failed as it always did."""

import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from packaging.requirements import Requirement

from stackbench.sandbox import venv_copies
from stackbench.sandbox.prerequisites import SandboxUnavailable
from stackbench.sandbox.settings import Profile
from stackbench.validation.document_sandbox import DocumentSandbox, PreparedVenv
from stackbench.validation.options import ValidationOptions


class PreparedVenvs:
    """The prepared virtualenvs of one batch, by (requirement, Python); close() removes them."""

    def __init__(self, scratch_dir: str | None) -> None:
        self._scratch_dir = scratch_dir
        self._folder: Path | None = None  # made with the first one
        self._lock = threading.Lock()
        self._locks: dict[tuple[str, Profile], threading.Lock] = {}
        self._made: dict[tuple[str, Profile], PreparedVenv | None] = {}

    def venv_for(
        self, requirement: str, options: ValidationOptions, should_stop: Callable[[], bool]
    ) -> PreparedVenv | None:
        """The virtualenv with requirement installed on the options' Python, made by the first page that asks
        (the others wait for it); None where there is none to copy (an unconfined sandbox makes its own
        virtualenv; the install failed)."""
        if options.sandbox.unconfined:
            return None
        key = (requirement, options.sandbox.profile)
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._made:
                self._made[key] = self._prepare(requirement, options, should_stop)
            return self._made[key]

    def _prepare(
        self, requirement: str, options: ValidationOptions, should_stop: Callable[[], bool]
    ) -> PreparedVenv | None:
        try:
            document = DocumentSandbox(options, f"prepare_{Requirement(requirement).name}", should_stop)
        except SandboxUnavailable:
            return None  # the page's own sandbox says why
        try:
            installed = document.install_library(requirement)
            if not installed.ok:
                return None
            target = Path(tempfile.mkdtemp(dir=self._batch_folder())) / "venv"
            document.sandbox.keep_venv(target)  # install() left nothing of the sandbox's running
        finally:
            document.close()
        return PreparedVenv(target, requirement, installed) if target.is_dir() else None

    def _batch_folder(self) -> Path:
        with self._lock:
            if self._folder is None:
                # Named with the worker's pid, like sandbox folders: the leftover sweep removes it if the worker dies.
                prefix = f"stackbench_sandbox_{os.getpid()}_prepared_"
                self._folder = Path(tempfile.mkdtemp(prefix=prefix, dir=self._scratch_dir))
            return self._folder

    def close(self) -> None:
        for prepared in self._made.values():
            if prepared is not None:
                venv_copies.discard(prepared.path)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
