"""The worker's way into a sandbox's files, tried with what a run can plant: links at every step of a path,
FIFOs, hard links, devices, folders where files go, and trees deeper than any project. The worker runs as root
here, so a followed link would really reach root-only files."""

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from stackbench.sandbox.files import MAX_DEPTH, Planted, SandboxFiles, chown_tree, copy_tree, tree_usage

INSIDE = "/home/reader"


@pytest.fixture
def host(tmp_path):
    """A sandbox's home on the host, and a root-only secret beside it that a followed link would reach."""
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    secret_dir = tmp_path / "root-only"
    secret_dir.mkdir(mode=0o700)
    (secret_dir / "secret.txt").write_text("ROOT-ONLY")
    (secret_dir / "secret.txt").chmod(0o600)
    return home, secret_dir


@pytest.fixture
def files(host):
    home, _ = host
    return SandboxFiles({INSIDE: home}, owner=None)


def test_a_link_anywhere_on_the_way_is_never_followed_for_reading(files, host):
    home, secret_dir = host
    os.symlink(secret_dir / "secret.txt", home / "work" / "app.py")
    os.symlink(secret_dir, home / "work" / "folder")
    for inside in (f"{INSIDE}/work/app.py", f"{INSIDE}/work/folder/secret.txt"):
        with pytest.raises(Planted):
            files.read(inside, 100)
        assert files.read_capped(inside, 100) == ("", False)
    assert files.kind(f"{INSIDE}/work/app.py") == "link"
    assert files.kind(f"{INSIDE}/work/folder/secret.txt") == "link"


def test_the_work_folder_itself_replaced_by_a_link_hides_nothing_and_reveals_nothing(files, host):
    home, secret_dir = host
    (home / "work").rmdir()
    os.symlink(secret_dir, home / "work")
    with pytest.raises(Planted):
        files.read(f"{INSIDE}/work/secret.txt", 100)
    assert files.find("secret.txt", f"{INSIDE}/work") is None
    assert files.kind(f"{INSIDE}/work/secret.txt") == "link"


def test_a_write_through_a_link_is_refused_and_the_target_untouched(files, host):
    home, secret_dir = host
    os.symlink(secret_dir / "new.py", home / "work" / "app.py")
    os.symlink(secret_dir, home / "work" / "sub")
    with pytest.raises(Planted):
        files.write(f"{INSIDE}/work/app.py", b"print('planted')")
    with pytest.raises(Planted):
        files.write(f"{INSIDE}/work/sub/deeper/x.py", b"planted")
    assert sorted(p.name for p in secret_dir.iterdir()) == ["secret.txt"]


def test_a_write_replaces_a_hard_linked_file_without_touching_the_other_name(files, host, tmp_path):
    home, _ = host
    shared = tmp_path / "shared.py"
    shared.write_text("shared by every run")
    os.link(shared, home / "work" / "mine.py")
    files.write(f"{INSIDE}/work/mine.py", b"only mine")
    files.write(f"{INSIDE}/work/mine.py", b" and more", append=True)
    assert shared.read_text() == "shared by every run"
    assert (home / "work" / "mine.py").read_text() == "only mine and more"


def test_a_write_makes_missing_folders_for_the_reader_and_keeps_an_existing_files_mode(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    files = SandboxFiles({INSIDE: home}, owner=(4242, 4343))
    files.write(f"{INSIDE}/work/src/pkg/run.sh", b"#!/bin/sh\n")
    made = home / "work" / "src" / "pkg"
    assert [(p.stat().st_uid, p.stat().st_gid) for p in (made.parent, made, made / "run.sh")] == [(4242, 4343)] * 3
    (made / "run.sh").chmod(0o755)
    files.write(f"{INSIDE}/work/src/pkg/run.sh", b"#!/bin/sh\necho hi\n")
    assert stat.S_IMODE((made / "run.sh").stat().st_mode) == 0o755


def test_a_fifo_or_a_socket_where_a_file_belongs_never_blocks_the_worker(files, host):
    home, _ = host
    os.mkfifo(home / "work" / "server.log")
    started = time.monotonic()
    with pytest.raises(Planted):
        files.read(f"{INSIDE}/work/server.log", 100)
    with pytest.raises(Planted):
        files.write(f"{INSIDE}/work/server.log", b"x", append=True)
    assert files.read_capped(f"{INSIDE}/work/server.log", 100) == ("", False)
    assert files.kind(f"{INSIDE}/work/server.log") == "other"
    assert time.monotonic() - started < 10  # a FIFO waited on would hang for ever


def test_a_huge_sparse_file_is_read_within_the_bound(files, host):
    home, _ = host
    with open(home / "work" / "huge.log", "wb") as out:
        out.write(b"start\n")
        out.truncate(50 * 1024**3)
        out.seek(50 * 1024**3 - 4)
        out.write(b"end\n")
    text, cut = files.read_capped(f"{INSIDE}/work/huge.log", 1000)
    assert cut and text.startswith("start") and text.endswith("end\n") and len(text) < 1200
    assert len(files.read(f"{INSIDE}/work/huge.log", 1000)) == 1000


def test_paths_that_leave_the_sandboxs_folders_are_refused(files):
    for outside in ("/etc/passwd", f"{INSIDE}/../../etc/passwd", "/home/readers"):
        assert not files.contains(outside)
        with pytest.raises(PermissionError):
            files.read(outside, 10)


def test_find_looks_only_where_it_may_and_never_through_links(files, host):
    home, secret_dir = host
    (home / "work" / "node_modules" / "pkg").mkdir(parents=True)
    (home / "work" / "node_modules" / "pkg" / "target.js").write_text("")
    (home / "work" / "src").mkdir()
    (home / "work" / "src" / "target.js").write_text("")
    os.symlink(secret_dir, home / "work" / "elsewhere")
    assert files.find("target.js", f"{INSIDE}/work", skip=frozenset({"node_modules"})) == f"{INSIDE}/work/src/target.js"
    assert files.find("secret.txt", f"{INSIDE}/work") is None


def test_usage_counts_files_and_blocks_and_stops_at_a_tree_deeper_than_any_project(tmp_path):
    tree = tmp_path / "tree"
    folder = tree
    for _ in range(MAX_DEPTH + 5):
        folder = folder / "d"
    folder.mkdir(parents=True)
    used = tree_usage(tree)
    assert used.too_deep and used.files <= MAX_DEPTH + 1
    flat = tmp_path / "flat"
    flat.mkdir()
    for index in range(50):
        (flat / f"f{index}").write_bytes(b"x" * 5000)
    os.symlink("/", flat / "root-link")
    used = tree_usage(flat)
    assert used.files == 51 and 50 * 4096 <= used.bytes < 60 * 8192 and not used.too_deep
    assert tree_usage(flat, stop_files=10).files == 11


def test_a_folder_swapped_for_a_link_during_a_walk_is_not_entered(tmp_path, host):
    """A run racing the worker: a folder becomes a link to a root-only folder again and again while it is
    measured; the walk counts the sandbox's own entries only."""
    _, secret_dir = host
    tree = tmp_path / "tree"
    (tree / "swap").mkdir(parents=True)
    for index in range(200):
        (secret_dir / f"s{index}").write_text("x")
    stop = threading.Event()

    def swap():
        while not stop.is_set():
            try:
                os.rename(tree / "swap", tree / "aside")
                os.symlink(secret_dir, tree / "swap")
                os.unlink(tree / "swap")
                os.rename(tree / "aside", tree / "swap")
            except OSError:
                pass

    racer = threading.Thread(target=swap)
    racer.start()
    try:
        for _ in range(300):
            assert tree_usage(tree).files <= 2
    finally:
        stop.set()
        racer.join()


def test_copying_back_follows_no_link_on_either_side(tmp_path, host):
    _, secret_dir = host
    sandbox_home = tmp_path / "sandbox-home"
    work = sandbox_home / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("print('hi')")
    os.symlink(secret_dir, work / "peek")  # copied as a link, never as the folder it names
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("host file")
    os.symlink(victim, chosen / "notes.txt")  # left by an earlier run in a reused folder
    (work / "notes.txt").write_text("the run's notes")
    os.symlink(secret_dir, chosen / "src")  # where the run has a folder
    copy_tree(sandbox_home, "work", chosen, (os.getuid(), os.getgid()))
    assert victim.read_text() == "host file"
    assert not (chosen / "notes.txt").is_symlink() and (chosen / "notes.txt").read_text() == "the run's notes"
    assert not (chosen / "src").is_symlink() and (chosen / "src" / "app.py").read_text() == "print('hi')"
    assert os.readlink(chosen / "peek") == str(secret_dir)
    assert sorted(p.name for p in secret_dir.iterdir()) == ["secret.txt"]


def test_a_work_folder_that_became_a_link_copies_nothing_out(tmp_path, host):
    _, secret_dir = host
    sandbox_home = tmp_path / "sandbox-home"
    sandbox_home.mkdir()
    os.symlink(secret_dir, sandbox_home / "work")
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    with pytest.raises(Planted):
        copy_tree(sandbox_home, "work", chosen, None)
    assert list(chosen.iterdir()) == []


def test_giving_a_tree_changes_links_themselves_never_their_targets(tmp_path, host):
    _, secret_dir = host
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "file").write_text("")
    os.symlink(secret_dir / "secret.txt", tree / "link")
    chown_tree(tree, (4242, 4242))
    assert (tree / "file").stat().st_uid == 4242 and os.lstat(tree / "link").st_uid == 4242
    assert (secret_dir / "secret.txt").stat().st_uid == os.getuid()


def test_a_device_node_where_a_file_belongs_is_refused(files, host):
    if os.geteuid() != 0:
        pytest.skip("making a device node takes root")
    home, _ = host
    os.mknod(home / "work" / "zero", 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    with pytest.raises(Planted):
        files.read(f"{INSIDE}/work/zero", 10)
    assert Path(home / "work" / "zero").exists()
