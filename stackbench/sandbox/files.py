"""The worker's only way into a sandbox's files.

A sandbox's commands can put a link, a FIFO or a hard link in place of any name in its folders at any moment, and
the worker may be root: following what they planted would make it read, write or hang on any file of the host.
So nothing here resolves a path. Every path is walked from a folder descriptor one name at a time with
O_NOFOLLOW (a link anywhere on the way is refused, never followed); files are opened non-blocking and used only
when regular; reads are bounded; a write goes to a file made just now, renamed into place, so the worker never
writes into an inode anyone else holds; trees are walked, measured and copied by descriptor.

Paths given to SandboxFiles are paths inside the sandbox (/home/reader/work/app.py); it maps them to the host
folders the sandbox's folders are, and owns that mapping: no other code turns an inside path into a host path.
"""

import contextlib
import errno
import os
import posixpath
import secrets
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from stackbench.sandbox.capture import read_capped

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO or a file under a lease must not hang the worker; O_NOCTTY: never a controlling terminal.
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# Deeper than this is no project a reader makes; walking further would hold a descriptor per level.
MAX_DEPTH = 128
APPEND_LIMIT = 16 * 1024**2  # an appended-to file is read whole, to be written anew


class Planted(OSError):
    """The run put something in the way: a link on the path, or no regular file (or folder) where one belongs."""


Owner = tuple[int, int]


@dataclass
class Usage:
    bytes: int = 0
    files: int = 0
    too_deep: bool = False


def open_folder(root: Path, names: list[str], make: bool = False, owner: Owner | None = None) -> int:
    """A descriptor of root/names..., reached without following any link; with make, missing folders are made
    (given to owner)."""
    fd = os.open(root, FOLDER_FLAGS)
    for name in names:
        fd = _step_into(fd, name, make, owner)  # closes the folder it steps out of, whatever happens
    return fd


def _step_into(fd: int, name: str, make: bool = False, owner: Owner | None = None) -> int:
    """The folder `name` inside the folder fd (fd is closed, the new one returned)."""
    try:
        try:
            child = os.open(name, FOLDER_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not make:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=fd)
                if owner is not None:
                    os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
            child = os.open(name, FOLDER_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _why_not_a_folder(fd, name) from None
            raise
    finally:
        os.close(fd)
    return child


def _why_not_a_folder(fd: int, name: str) -> OSError:
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except OSError as exc:
        return exc
    if stat.S_ISLNK(mode):
        return Planted(errno.ELOOP, f"{name} is a symbolic link")
    return NotADirectoryError(errno.ENOTDIR, f"{name} is not a folder")


def open_regular(fd: int, name: str) -> int:
    """A descriptor for reading the regular file `name` in the folder fd; a link, FIFO, socket or device is
    refused without being opened for real (O_NONBLOCK) or followed."""
    try:
        handle = os.open(name, FILE_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Planted(errno.ELOOP, f"{name} is a symbolic link") from None
        if exc.errno in (errno.EWOULDBLOCK, errno.ENXIO):
            raise Planted(exc.errno, f"{name} is not a regular file") from None
        raise
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise Planted(errno.EINVAL, f"{name} is not a regular file")
    return handle


def read_all(handle: int, limit: int) -> bytes:
    """At most limit bytes from the start of a file."""
    chunks, size = [], 0
    while size < limit:
        chunk = os.pread(handle, min(1024**2, limit - size), size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class SandboxFiles:
    """One sandbox's folders as the worker may touch them. mounts maps each inside folder to the host folder it
    is (the most specific wins); owner is who the reader is on the host, for what the worker makes for it."""

    def __init__(self, mounts: dict[str, Path], owner: Owner | None):
        self.mounts = sorted(((inside.rstrip("/") or "/", host) for inside, host in mounts.items()), reverse=True)
        self.owner = owner

    def split(self, inside: str) -> tuple[Path, list[str]] | None:
        """The host folder an inside path starts from, and the names below it; None outside the sandbox's folders.
        `..` is resolved as text: since no link is ever followed, that is what it means here."""
        path = posixpath.normpath(inside)
        for prefix, host in self.mounts:
            if path == prefix or path.startswith(prefix + "/"):
                rest = path[len(prefix) :].strip("/")
                return host, [name for name in rest.split("/") if name]
        return None

    def contains(self, inside: str) -> bool:
        return self.split(inside) is not None

    def _where(self, inside: str) -> tuple[Path, list[str]]:
        located = self.split(inside)
        if located is None:
            raise PermissionError(errno.EACCES, f"{inside} is outside the sandbox's folders")
        return located

    # -- looking ----------------------------------------------------------------------------------------------
    def kind(self, inside: str) -> str | None:
        """What is at inside: "file", "folder", "link" (also when a folder on the way is one), "other", or None
        for nothing. A link is never followed: where it points is the run's business."""
        root, names = self._where(inside)
        try:
            fd = open_folder(root, names[:-1])
        except Planted:
            return "link"
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            if not names:
                return "folder"
            mode = os.stat(names[-1], dir_fd=fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return None
        finally:
            os.close(fd)
        if stat.S_ISLNK(mode):
            return "link"
        if stat.S_ISDIR(mode):
            return "folder"
        return "file" if stat.S_ISREG(mode) else "other"

    def read(self, inside: str, limit: int) -> bytes:
        """The first limit bytes of a regular file; raises Planted for a link or a non-regular file."""
        with self._opened(inside) as handle:
            return read_all(handle, limit)

    def read_capped(self, inside: str, limit: int, offset: int = 0) -> tuple[str, bool]:
        """A file's head and tail within limit (as capture.read_capped); ("", False) for anything else."""
        try:
            with self._opened(inside) as handle:
                return read_capped(handle, limit, offset)
        except OSError:
            return "", False

    @contextlib.contextmanager
    def _opened(self, inside: str) -> Iterator[int]:
        root, names = self._where(inside)
        if not names:
            raise IsADirectoryError(errno.EISDIR, f"{inside} is a folder")
        fd = open_folder(root, names[:-1])
        try:
            handle = open_regular(fd, names[-1])
        finally:
            os.close(fd)
        try:
            yield handle
        finally:
            os.close(handle)

    def find(self, name: str, under: str, skip: frozenset[str] = frozenset(), limit: int = 20_000) -> str | None:
        """The inside path of the first file or folder called name under `under` (breadth first, no link
        followed, folders in skip not entered), looking at no more than limit entries."""
        located = self.split(under)
        if located is None:
            return None
        root, start = located
        queue, seen = [start], 0
        while queue and seen <= limit:
            names = queue.pop(0)
            try:
                fd = open_folder(root, names)
            except OSError:
                continue
            try:
                with os.scandir(fd) as entries:
                    for entry in entries:
                        seen += 1
                        if entry.name == name:
                            return posixpath.join(under, *names[len(start) :], name)
                        if entry.name not in skip and entry.is_dir(follow_symlinks=False):
                            queue.append([*names, entry.name])
                        if seen > limit:
                            break
            except OSError:
                pass
            finally:
                os.close(fd)
        return None

    # -- writing ----------------------------------------------------------------------------------------------
    def write(self, inside: str, data: bytes, append: bool = False) -> None:
        """Write a file as the reader's own (its missing folders made): always a new file renamed into place, so
        nothing the run linked or shares is written through. Appending reads the old file (a regular one only)
        and writes old and new anew. Raises Planted when a link is on the way."""
        root, names = self._where(inside)
        if not names:
            raise IsADirectoryError(errno.EISDIR, f"{inside} is a folder")
        fd = open_folder(root, names[:-1], make=True, owner=self.owner)
        try:
            name, mode = names[-1], 0o644
            try:
                existing = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                existing = None
            if existing is not None:
                if stat.S_ISLNK(existing.st_mode):
                    raise Planted(errno.ELOOP, f"{name} is a symbolic link")
                if stat.S_ISDIR(existing.st_mode):
                    raise IsADirectoryError(errno.EISDIR, f"{name} is a folder")
                if not stat.S_ISREG(existing.st_mode):
                    raise Planted(errno.EINVAL, f"{name} is not a regular file")
                mode = stat.S_IMODE(existing.st_mode) & 0o777
                if append:
                    handle = open_regular(fd, name)
                    try:
                        if os.fstat(handle).st_size > APPEND_LIMIT:
                            raise OSError(errno.EFBIG, f"{name} is too big to append to")
                        data = read_all(handle, APPEND_LIMIT) + data
                    finally:
                        os.close(handle)
            replace_with(fd, name, data, mode, self.owner)
        finally:
            os.close(fd)


def replace_with(fd: int, name: str, data: bytes, mode: int, owner: Owner | None) -> None:
    """Put a new file with data at name in the folder fd, atomically, whatever was there (a link included: rename
    replaces the link itself)."""
    aside = _aside_name(name)
    handle = os.open(aside, NEW_FILE_FLAGS, 0o600, dir_fd=fd)
    try:
        with open(handle, "wb", closefd=False) as out:
            out.write(data)
        os.fchmod(handle, mode)
        if owner is not None:
            os.fchown(handle, *owner)
    except BaseException:
        os.close(handle)
        with contextlib.suppress(OSError):
            os.unlink(aside, dir_fd=fd)
        raise
    os.close(handle)
    try:
        os.rename(aside, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(aside, dir_fd=fd)
        raise


# -- whole trees ------------------------------------------------------------------------------------------------
def walk(root: Path) -> Iterator[tuple[int, os.DirEntry, os.stat_result, int]]:
    """Every entry below root, depth first, as (its folder's descriptor, entry, its lstat, depth): no link
    followed, a folder swapped for a link while walking skipped, one descriptor held per level. A folder below
    MAX_DEPTH is yielded with depth MAX_DEPTH + 1 and not entered."""
    fd = os.open(root, FOLDER_FLAGS)
    try:
        yield from _walk_folder(fd, 0)
    finally:
        os.close(fd)


def _entries(fd: int) -> Iterator[tuple[os.DirEntry, os.stat_result]]:
    """The entries of the folder fd with their lstat, read as they come (a folder of a million costs no more
    memory than one); what cannot be listed, or is gone by the time it is looked at, is skipped."""
    try:
        entries = os.scandir(fd)
    except OSError:
        return
    with entries:
        for entry in entries:
            try:
                yield entry, entry.stat(follow_symlinks=False)
            except OSError:
                continue


def _walk_folder(fd: int, depth: int) -> Iterator[tuple[int, os.DirEntry, os.stat_result, int]]:
    for entry, info in _entries(fd):
        if not stat.S_ISDIR(info.st_mode):
            yield fd, entry, info, depth + 1
            continue
        if depth >= MAX_DEPTH:
            yield fd, entry, info, MAX_DEPTH + 1
            continue
        yield fd, entry, info, depth + 1
        try:
            child = _step_into(os.dup(fd), entry.name)
        except OSError:
            continue
        try:
            yield from _walk_folder(child, depth + 1)
        finally:
            os.close(child)


def tree_usage(root: Path, stop_bytes: int | None = None, stop_files: int | None = None) -> Usage:
    """Disk blocks and entries below root (a hard-linked inode once), counting stopped once past a stop."""
    usage, linked = Usage(), set()
    for _, _, info, depth in walk(root):
        if depth > MAX_DEPTH:
            usage.too_deep = True
            break
        if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
            if info.st_ino in linked:
                continue
            linked.add(info.st_ino)
        usage.bytes += info.st_blocks * 512
        usage.files += 1
        if (stop_bytes is not None and usage.bytes > stop_bytes) or (
            stop_files is not None and usage.files > stop_files
        ):
            break
    return usage


def chown_tree(root: Path, owner: Owner, folders_only: bool = False) -> None:
    """Give root and what is below it to owner, links themselves included, never what they point to."""
    os.chown(root, *owner, follow_symlinks=False)
    for fd, entry, info, _ in walk(root):
        if not folders_only or stat.S_ISDIR(info.st_mode):
            with contextlib.suppress(OSError):
                os.chown(entry.name, *owner, dir_fd=fd, follow_symlinks=False)


def copy_tree(parent: Path, name: str, destination: Path, owner: Owner | None) -> None:
    """Copy the folder parent/name into destination: folders, regular files and links (as links), following no
    link on either side (a link at parent/name itself copies nothing; what is in the way in destination, a link
    where a folder goes, say, is replaced, never written through). Permission bits and file times are kept;
    everything made belongs to owner. Nothing in destination is removed; FIFOs, sockets and devices are not
    copied."""
    source_fd = open_folder(parent, [name])
    try:
        target_fd = open_folder(destination, [])
    except BaseException:
        os.close(source_fd)
        raise
    try:
        _copy_folder(source_fd, target_fd, owner, 0)
    finally:
        os.close(source_fd)
        os.close(target_fd)


def _copy_folder(source_fd: int, target_fd: int, owner: Owner | None, depth: int) -> None:
    for entry, info in _entries(source_fd):
        try:
            if stat.S_ISDIR(info.st_mode) and depth < MAX_DEPTH:
                _copy_subfolder(source_fd, target_fd, entry.name, info, owner, depth)
            elif stat.S_ISREG(info.st_mode):
                _copy_file(source_fd, target_fd, entry.name, info, owner)
            elif stat.S_ISLNK(info.st_mode):
                _copy_link(source_fd, target_fd, entry.name, owner)
        except (Planted, FileNotFoundError, NotADirectoryError):
            continue  # changed under us, or nothing a reader's files are made of


def _copy_subfolder(
    source_fd: int, target_fd: int, name: str, info: os.stat_result, owner: Owner | None, depth: int
) -> None:
    child_source = _step_into(os.dup(source_fd), name)
    try:
        try:
            mode = os.stat(name, dir_fd=target_fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and not stat.S_ISDIR(mode):
            os.unlink(name, dir_fd=target_fd)
        child_target = _step_into(os.dup(target_fd), name, make=True, owner=owner)
        try:
            _copy_folder(child_source, child_target, owner, depth + 1)
            os.fchmod(child_target, stat.S_IMODE(info.st_mode) & 0o777 | 0o700)
        finally:
            os.close(child_target)
    finally:
        os.close(child_source)


def _copy_file(source_fd: int, target_fd: int, name: str, info: os.stat_result, owner: Owner | None) -> None:
    handle = open_regular(source_fd, name)
    try:
        _clear_folder(target_fd, name)
        aside = _aside_name(name)
        out = os.open(aside, NEW_FILE_FLAGS, 0o600, dir_fd=target_fd)
        try:
            offset = 0
            while chunk := os.pread(handle, 1024**2, offset):
                os.write(out, chunk)
                offset += len(chunk)
            os.fchmod(out, stat.S_IMODE(info.st_mode) & 0o777)
            if owner is not None:
                os.fchown(out, *owner)
            os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(out)
        os.rename(aside, name, src_dir_fd=target_fd, dst_dir_fd=target_fd)
    finally:
        os.close(handle)


def _copy_link(source_fd: int, target_fd: int, name: str, owner: Owner | None) -> None:
    pointing_to = os.readlink(name, dir_fd=source_fd)
    _clear_folder(target_fd, name)
    aside = _aside_name(name)
    os.symlink(pointing_to, aside, dir_fd=target_fd)
    if owner is not None:
        os.chown(aside, *owner, dir_fd=target_fd, follow_symlinks=False)
    os.rename(aside, name, src_dir_fd=target_fd, dst_dir_fd=target_fd)


def _clear_folder(target_fd: int, name: str) -> None:
    """A folder where a file goes is removed first (rename cannot put a file over a folder)."""
    try:
        mode = os.stat(name, dir_fd=target_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(name, dir_fd=target_fd)


def _aside_name(name: str) -> str:
    """A fresh name beside name, for a file written whole before it takes name's place."""
    return f".{name[:200]}.stackbench-{secrets.token_hex(6)}"
