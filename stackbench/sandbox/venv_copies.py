"""Reader virtualenvs: a template made once per Python (or one prepared with a library, for a batch of pages),
and private copies of it for each sandbox.

A sandbox's virtualenv must be its own down to the inode: hard links into the template would let one run (or the
worker writing a file for it) change every later run's Python. A full copy costs a few hundred milliseconds, so
copies are made ahead in the background for the next sandboxes, each already given to the unprivileged uid its
sandbox will run as; a sandbox takes one with a rename. Copies lie in the sandboxes' scratch folder (so the rename stays on one
filesystem) under a name carrying the worker's pid, so the leftover sweep removes those of a dead worker.
"""

import contextlib
import hashlib
import os
import secrets
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from stackbench.sandbox import files as sandbox_files

# Every sandbox gets an unprivileged uid of its own when the worker is root: files, processes and the per-uid
# process limit of one run are then nobody else's.
SANDBOX_UIDS = (2_000_000_000, 2_140_000_000)  # the kernel refuses uid maps at 2**31 and above


def new_sandbox_uid() -> int:
    return secrets.randbelow(SANDBOX_UIDS[1] - SANDBOX_UIDS[0]) + SANDBOX_UIDS[0]


@dataclass(frozen=True)
class VenvCopy:
    path: Path
    uid: int | None  # whom its files belong to (None: the worker, which is not root)


CP = shutil.which("cp", path="/usr/bin:/bin") or "cp"
_ready: dict[Path, list[VenvCopy]] = {}
_making: set[Path] = set()
_changed = threading.Condition()
IN_FLIGHT_WAIT = 30.0  # seconds a sandbox waits for the copy already being made before making its own
READY_COPIES = 2  # kept ready per template: runs started back to back (run everything) each find one


def template_folder(templates_dir: str | None, python: str, python_version: str, uv: str | None) -> Path | None:
    """Where the template for this Python (and uv, which seeds it) is kept."""
    if not templates_dir:
        return None
    real = Path(python).resolve()
    key = f"{real}|{python_version}|{os.stat(real).st_mtime_ns}"
    if uv:
        key += f"|{os.stat(uv).st_size}"
    return Path(templates_dir) / f"venv-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def keep_template(venv: Path, template: Path) -> None:
    """Keep a freshly made virtualenv as the template later sandboxes copy (written aside, then renamed, so two
    workers making one at once never leave half of one). The worker owns it; nothing of a run ever links to it."""
    template.parent.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=".venv-", dir=template.parent))
    try:
        (aside / "venv").mkdir()
        sandbox_files.copy_tree(venv.parent, venv.name, aside / "venv", (os.getuid(), os.getgid()))
        os.rename(aside / "venv", template)
    except OSError:
        pass  # another worker kept one first
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def take_copy(template: Path, scratch: Path, as_root: bool) -> VenvCopy:
    """A private copy of the template: one made ahead (waiting for the one being made, which is sooner than
    starting another beside it), else one made now; either way the next one is then made in the background."""
    with _changed:
        _changed.wait_for(lambda: _ready.get(template) or template not in _making, timeout=IN_FLIGHT_WAIT)
        ready = _ready.get(template)
        copy = ready.pop() if ready else None
    if copy is None:
        copy = _make_copy(template, scratch, as_root)
    _make_ahead(template, scratch, as_root)
    return copy


def _make_copy(template: Path, scratch: Path, as_root: bool) -> VenvCopy:
    uid = new_sandbox_uid() if as_root else None
    folder = Path(tempfile.mkdtemp(prefix=f"stackbench_sandbox_{os.getpid()}_venv_", dir=scratch))
    target = folder / "venv"
    try:
        # The template is the worker's own (never written by a run): cp is the fastest faithful copy of it.
        subprocess.run([CP, "-a", "--", str(template), str(target)], check=True, timeout=300, capture_output=True)
        if uid is not None:
            sandbox_files.chown_tree(target, (uid, uid))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return VenvCopy(target, uid)


def _make_ahead(template: Path, scratch: Path, as_root: bool) -> None:
    with _changed:
        if template in _making or len(_ready.get(template, [])) >= READY_COPIES:
            return
        _making.add(template)

    def make() -> None:
        """Copies, one after another, until READY_COPIES are ready (or one cannot be made)."""
        while True:
            copy = None
            try:
                copy = _make_copy(template, scratch, as_root)
            except (OSError, subprocess.SubprocessError):
                pass
            with _changed:
                if copy is not None:
                    _ready.setdefault(template, []).append(copy)
                done = copy is None or len(_ready[template]) >= READY_COPIES
                if done:
                    _making.discard(template)
                _changed.notify_all()
            if done:
                return

    threading.Thread(target=make, name="venv-copy-ahead", daemon=True).start()


def discard(template: Path) -> None:
    """Forget a template that goes away (a batch's prepared virtualenv): the copies made ahead of it are removed
    once the one being made, if any, is done."""
    with _changed:
        _changed.wait_for(lambda: template not in _making, timeout=IN_FLIGHT_WAIT)
        copies = _ready.pop(template, [])
    for copy in copies:
        shutil.rmtree(copy.path.parent, ignore_errors=True)


def release(copy: VenvCopy) -> None:
    """Remove what is left of a copy once it was moved into its sandbox (its folder in the scratch space)."""
    with contextlib.suppress(OSError):
        copy.path.parent.rmdir()
