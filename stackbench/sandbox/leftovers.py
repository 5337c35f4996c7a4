"""What workers that died left behind in the scratch folder: sandbox folders (and Claude workspaces, and
ready-made virtualenv copies), named with their worker's pid, and the processes still working in them."""

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from pathlib import Path


def sweep_leftovers(scratch_dir: str | None = None) -> None:
    """Remove the folders of sandboxes (and Claude workspaces, and ready-made virtualenv copies) whose worker died,
    and end every process still working in one. A sandbox's own processes die with its worker (its init and
    network do), but a process started outside a PID namespace (an unconfined run, the Claude CLI's commands)
    lives on until swept. Only real folders of this worker's user are swept: a link named like one is left alone
    (following it would end processes and remove files wherever it points)."""
    folder = Path(scratch_dir or tempfile.gettempdir()).resolve()  # the configured place; what is in it is not
    for root in folder.glob("stackbench_sandbox_*"):
        owner = root.name.split("_")[2]
        try:
            info = root.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            kill_processes_working_in(root)
            shutil.rmtree(root, ignore_errors=True)


def kill_processes_working_in(folder: Path) -> None:
    """End every process whose working folder lies in folder (a real folder, given as it is: never resolved)."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            working_in = Path(os.readlink(entry / "cwd"))
        except OSError:
            continue
        if working_in.is_relative_to(folder) and int(entry.name) != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
