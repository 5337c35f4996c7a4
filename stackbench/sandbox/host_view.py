"""What of the host a sandbox sees: what a newcomer's machine has, read-only, and nothing else.

That is the system (/usr and the /bin, /lib... that point into it), its configuration (/etc, without what
others may not read: shadow files, private keys, sudoers), and the interpreters the reader's profile names when
they live elsewhere (/opt/python3.12). Not /, with holes cut where the app is: other checkouts, their databases,
/var/log, /sys, /srv, /home and /root are simply not there. What the sandbox's user could reach of the rest by its
permissions alone (an interpreter, a tool, a folder to show) is reachable_by_anyone."""

import functools
import os
import stat
from pathlib import Path

SYSTEM = "/usr"
# Merged-/usr systems make these links into /usr; older ones have real folders.
SYSTEM_ROOTS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
CONFIGURATION = "/etc"


def mounts(interpreters: list[str], hidden: list[str], empty_file: str) -> list[str]:
    """bubblewrap arguments for the host's read-only view: the system, its configuration, the prefixes of the
    interpreters (a python or node binary) that lie outside /usr, and empty folders over `hidden` where it would
    otherwise show. empty_file (an empty regular file the sandbox's user can reach) stands in for hidden files."""
    arguments = ["--ro-bind", SYSTEM, SYSTEM]
    for root in SYSTEM_ROOTS:
        if os.path.islink(root):
            arguments += ["--symlink", os.readlink(root), root]
        elif os.path.isdir(root):
            arguments += ["--ro-bind", root, root]
    arguments += ["--ro-bind", CONFIGURATION, CONFIGURATION]
    for kind, path in _unreadable_configuration():
        arguments += ["--tmpfs", path, "--remount-ro", path] if kind == "folder" else ["--ro-bind", empty_file, path]
    shown = [SYSTEM, CONFIGURATION]
    for prefix in dict.fromkeys(prefix for path in interpreters if (prefix := _prefix_of(path))):
        if not any(Path(prefix).is_relative_to(folder) for folder in shown):
            arguments += ["--ro-bind", prefix, prefix]
            shown.append(prefix)
    for path in hidden:
        if path != "/" and any(Path(path).is_relative_to(folder) for folder in shown) and os.path.isdir(path):
            arguments += ["--tmpfs", path, "--remount-ro", path]
    return arguments


def _prefix_of(interpreter: str) -> str | None:
    """The installation an interpreter belongs to (/opt/python3.12 for /opt/python3.12/bin/python3.12)."""
    try:
        real = Path(interpreter).resolve(strict=True)
    except OSError:
        return None
    return str(real.parent.parent if real.parent.name == "bin" else real.parent)


@functools.cache
def _unreadable_configuration() -> tuple[tuple[str, str], ...]:
    """What in /etc (and one level below) others may not read, as ("folder" or "file", path), to cover: the
    reader could not read it anyway, and now cannot even see what it holds."""
    covers: list[tuple[str, str]] = []
    for folder in (Path(CONFIGURATION), *_folders(Path(CONFIGURATION))):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and not info.st_mode & stat.S_IXOTH:
                covers.append(("folder", entry.path))
            elif stat.S_ISREG(info.st_mode) and not info.st_mode & stat.S_IROTH:
                covers.append(("file", entry.path))
    return tuple(covers)


def _folders(folder: Path) -> list[Path]:
    try:
        return [
            Path(entry.path)
            for entry in os.scandir(folder)
            if entry.is_dir(follow_symlinks=False) and entry.stat().st_mode & stat.S_IXOTH
        ]
    except OSError:
        return []


def reachable_by_anyone(path: Path, execute: bool = False) -> bool:
    """Whether a user with no rights of its own (a sandbox's user) can reach the file or folder (every folder on
    its way can be entered by others) and read it, or with execute, run it."""
    try:
        real = path.resolve(strict=True)
        needed = stat.S_IXOTH if execute or real.is_dir() else stat.S_IROTH
        return bool(real.stat().st_mode & needed) and all(p.stat().st_mode & stat.S_IXOTH for p in real.parents)
    except OSError:
        return False
