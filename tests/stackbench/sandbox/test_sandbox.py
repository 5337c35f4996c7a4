"""The sandbox, tried the way a hostile or careless tutorial would: real bubblewrap, slirp4netns, cgroups and
processes, no mocks. The worker runs as root here (as `bin/start` runs it), which is what the isolation must
hold against."""

import ctypes
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.conf import settings

from stackbench.auditing.terminal import Terminal
from stackbench.sandbox.prerequisites import SandboxUnavailable
from stackbench.sandbox.reader import HOME, WORK
from stackbench.sandbox.sandbox import open_sandbox
from stackbench.sandbox.settings import SandboxSettings
from stackbench_site.configuration import sandbox_settings
from tests.builders import processes_of, wait_for

pytestmark = pytest.mark.slow


def test_a_step_sees_no_process_of_the_host_and_cannot_enter_the_workers_namespaces(terminal, root_worker):
    term = terminal()
    worker = os.getpid()
    listing = term.run("ls /proc | grep -c '^[0-9]'; ps -eo comm").output
    assert "pytest" not in listing and "python" not in listing.split()[1:]
    for attempt in (
        f"cat /proc/{worker}/environ",
        f"ls /proc/{worker}/root/",
        f"nsenter -t {worker} -m true",
        "nsenter -t 1 -m -u true",
        "mount -o remount,rw /",
        "mount -t tmpfs none /mnt",
    ):
        result = term.run(f"{attempt}; echo rc=$?")
        assert "rc=0" not in result.output, attempt
    caps = term.run("grep CapEff /proc/self/status").output
    assert caps.split()[-1] == "0000000000000000"


def test_another_runs_folder_cannot_be_read(make_sandbox, root_worker):
    first, second = make_sandbox(label="first"), make_sandbox(label="second")
    first.write_file(f"{WORK}/private.txt", "run one's notes")
    assert first.files.kind(f"{WORK}/private.txt") == "file"
    other = Terminal(second)
    try:
        read = other.run(f"cat {first.root}/home/work/private.txt")
        assert not read.ok and "run one's notes" not in read.output
        assert "stackbench_sandbox_" not in other.run("ls -A /tmp /home").output
    finally:
        other.close()


def test_pip_install_changes_only_this_run(make_sandbox):
    worker_python = subprocess.run(
        [sys.executable, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout
    first = Terminal(make_sandbox(label="first"))
    installed = first.run(
        "pip install --quiet six==1.16.0 && python -c 'import six; print(six.__version__)'", timeout=120
    )
    assert installed.ok and installed.output.strip().endswith("1.16.0"), installed.output
    assert first.run("python -c 'import six'").ok
    first.close()
    second = Terminal(make_sandbox(label="second"))
    assert "ModuleNotFoundError" in second.run("python -c 'import six'").output
    second.close()
    after = subprocess.run(
        [sys.executable, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    ).stdout
    assert after == worker_python


def test_npm_installs_from_the_registry_land_in_the_readers_prefix(terminal):
    term = terminal(timeout=120)
    assert term.run("npm config get prefix").output.strip() == f"{HOME}/.npm-global"
    installed = term.run("npm install --global --silent is-number@7.0.0 && ls ~/.npm-global/lib/node_modules")
    assert installed.ok and "is-number" in installed.output, installed.output


def test_the_machine_finds_its_own_name_as_a_readers_does(terminal):
    found = terminal().run('getent hosts "$(hostname)"')
    assert found.ok and "127.0.1.1" in found.output, found.output


def test_a_daemon_does_not_outlive_its_run(make_sandbox, root_worker):
    sandbox = make_sandbox()
    term = Terminal(sandbox)
    term.run("setsid nohup sleep 600 >/dev/null 2>&1 & disown; (setsid bash -c 'sleep 600' &) ; echo started")
    assert processes_of(sandbox.uid)
    term.close()
    sandbox.close()
    # The daemons sleep for 10 minutes: gone within 30 s means the close ended them (a loaded machine may take
    # seconds; how fast a sandbox closes is bench/audit_overhead.py's business, not this test's).
    wait_for(lambda: not processes_of(sandbox.uid), timeout=30, message="the daemons to end with the run")


def test_a_fork_bomb_is_contained_and_the_next_command_runs_in_the_same_place(terminal, pids_cgroup):
    term = terminal(max_processes=64, timeout=60)
    term.run("mkdir kept && cd kept && export KEPT=yes")
    started = time.monotonic()
    result = term.run("bomb() { bomb | bomb & }; bomb; sleep 50")
    assert result.process_limit and not result.ok and time.monotonic() - started < 15
    assert "limit of 64 processes" in result.output and "process limit" in result.evidence()
    after = term.run('echo "$KEPT $(basename "$PWD")"; ls / > /dev/null')
    assert after.ok and after.output == "yes kept\n"


def test_a_command_that_ends_but_leaves_a_fork_bomb_behind_is_caught_too(terminal, pids_cgroup):
    term = terminal(max_processes=64, timeout=60)
    result = term.run("bomb() { bomb | bomb & }; bomb 2>/dev/null; sleep 0.5 2>/dev/null; true")
    assert result.process_limit and not result.ok
    assert term.run("ls / > /dev/null").ok


def test_a_python_snippet_that_forks_without_end_is_killed_and_python_starts_afresh(terminal, pids_cgroup):
    term = terminal(max_processes=64, timeout=60)
    assert term.run_python("kept = 1", "<step>").ok
    result = term.run_python(
        "import os, time\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        time.sleep(0.01)",
        "<step>",
    )
    assert result.process_limit
    after = term.run_python("print('kept' in globals())", "<step>")
    assert after.ok and after.output == "False\n"


def test_a_ten_gigabyte_allocation_is_refused_and_the_terminal_goes_on(terminal):
    term = terminal(memory_bytes=512 * 1024**2)
    result = term.run("python3 -c 'x = bytearray(10 * 1024**3); print(len(x))'")
    assert result.exit_code != 0 and "MemoryError" in result.output
    assert term.run("echo still-here").output == "still-here\n"


def test_a_gigabyte_of_output_costs_bounded_memory_and_keeps_the_end(terminal):
    term = terminal(output_bytes=10_000, timeout=120)
    result = term.run("head -c 1000000000 /dev/zero | tr '\\0' 'x'; echo; echo THE-END")
    assert result.ok and result.truncated and len(result.output) < 12_000
    assert result.output.rstrip().endswith("THE-END")


def test_a_huge_file_is_stopped_by_the_file_size_limit(terminal):
    term = terminal(file_size_bytes=1024 * 1024)
    result = term.run("head -c 5000000 /dev/zero > big.bin; echo rc=$?")
    assert "rc=0" not in result.output
    assert len(term.sandbox.files.read(f"{WORK}/big.bin", 10 * 1024**2)) <= 1024 * 1024


def test_cancel_ends_every_process_of_the_run(make_sandbox, root_worker):
    sandbox = make_sandbox()
    stop = threading.Event()
    term = Terminal(sandbox, should_stop=stop.is_set)
    term.start_background("sleep 600", settle_seconds=0.3)
    threading.Timer(0.5, stop.set).start()
    result = term.run("sleep 300 & sleep 300")
    assert result.cancelled
    term.close()
    sandbox.close()
    # Killed at once; gone once the machine's init reaps them (a second or two, more on a loaded machine). They
    # sleep for minutes, so gone within 30 s means the cancel ended them; how fast is for the benches.
    wait_for(lambda: not processes_of(sandbox.uid), timeout=30, message="every process of the run to end")


def test_twenty_sandboxes_at_once_each_start_with_their_own_tmp_and_home(make_sandbox):
    def one(index):
        sandbox = make_sandbox(label=f"many{index}")
        marker = f"run-{index}"
        done = sandbox.run(
            [
                "/bin/bash",
                "-c",
                f"echo {marker} > /tmp/mine; echo {marker} > ~/mine; sleep 0.2; cat /tmp/mine ~/mine; ls /tmp | wc -l",
            ],
            timeout=60,
        )
        return marker, done

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(one, range(20)))
    for marker, done in outcomes:
        assert done.returncode == 0, done.stdout
        assert done.stdout.split() == [marker, marker, "1"]


def test_a_walkthrough_can_be_followed_in_a_folder_of_the_users_choice(make_sandbox, tmp_path):
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    owner = chosen.stat().st_uid
    sandbox = make_sandbox(work_dir=chosen)
    assert sandbox.run(["/bin/bash", "-c", "echo hi > made.txt"], timeout=30).returncode == 0
    sandbox.close()
    assert (chosen / "made.txt").read_text() == "hi\n" and (chosen / "made.txt").stat().st_uid == owner


def test_the_unconfined_jail_still_gives_an_allowlisted_environment_and_its_own_folders(monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "never-show-me")
    unconfined = sandbox_settings()
    unconfined = type(unconfined)(**{**unconfined.__dict__, "unconfined": True})
    sandbox = open_sandbox(unconfined, "weak")
    try:
        term = Terminal(sandbox)
        output = term.run("env; pwd; command -v pip").output
        assert "never-show-me" not in output and sandbox.describe()["confinement"] == "unconfined"
        assert f"{sandbox.work}\n" in output and f"{sandbox.home}/.venv/bin/pip" in output
        term.close()
    finally:
        sandbox.close()
    assert not sandbox.root.exists()


def test_a_work_folder_swapped_for_a_link_to_a_root_only_folder_copies_nothing_out(make_sandbox, tmp_path, root_only):
    folder, _ = root_only
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    sandbox = make_sandbox(work_dir=chosen)
    swap = f"cd {HOME} && mv work work.real && ln -s {folder} work && echo swapped"
    assert sandbox.run(["/bin/bash", "-c", swap], timeout=30).stdout.strip() == "swapped"
    sandbox.close()
    assert list(chosen.iterdir()) == []


def test_a_link_left_in_a_reused_working_folder_is_replaced_never_written_through(make_sandbox, tmp_path, root_only):
    folder, secret = root_only
    chosen = tmp_path / "chosen"
    chosen.mkdir()
    os.symlink(secret, chosen / "notes.txt")  # what an earlier run left behind
    os.symlink(folder, chosen / "build")
    sandbox = make_sandbox(work_dir=chosen)
    rewrite = "rm -f notes.txt build && echo mine > notes.txt && mkdir build && echo out > build/app.js"
    assert sandbox.run(["/bin/bash", "-c", rewrite], timeout=30).returncode == 0
    sandbox.close()
    assert secret.read_text() == "ROOT-ONLY-SECRET-7f3a" and secret.stat().st_uid == 0
    assert sorted(path.name for path in folder.iterdir()) == ["secret.txt"]
    assert (chosen / "notes.txt").read_text() == "mine\n" and not (chosen / "notes.txt").is_symlink()
    assert (chosen / "build" / "app.js").read_text() == "out\n"


def test_keys_in_the_workers_session_keyring_are_not_the_runs(terminal, root_worker):
    """A worker started from a login session holds that session's keyring, and every process it starts inherits
    it: this thread joins a keyring of its own and keeps a key there, as such a worker would."""
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl, add_key = (250, 248) if os.uname().machine == "x86_64" else (219, 217)
    if libc.syscall(keyctl, 1, b"stackbench-test-session") == -1:  # KEYCTL_JOIN_SESSION_KEYRING
        pytest.skip("no keyrings on this kernel")
    secret = b"KEYRING-SECRET-91"
    assert libc.syscall(add_key, b"user", b"stackbench-test-key", secret, len(secret), -3) > 0  # @s
    term = terminal()
    assert "stackbench-test-key" not in term.run("cat /proc/keys").output
    assert "KEYRING-SECRET-91" not in term.run("keyctl print %user:stackbench-test-key").output


@pytest.mark.parametrize(
    "name, value",
    [
        ("PIP_INDEX_URL", "https://deploy:s3cret@mirror.example/simple"),
        ("PIP_EXTRA_INDEX_URL", "https://pypi.example/simple https://token@private.example/simple"),
        ("UV_INDEX", "internal=https://user:pw@index.example/simple"),
        ("https_proxy", "http://proxyuser:proxypass@proxy.example:3128"),
    ],
)
def test_a_credential_inside_a_passed_through_value_stops_the_run_naming_the_variable(name, value):
    with pytest.raises(SandboxUnavailable, match=rf"^{name} carries a user name or password"):
        open_sandbox(SandboxSettings(environment={name: value}), "x")


NOT_ROOT_WORKER = """
import json, sys
from pathlib import Path
from stackbench.auditing.terminal import Terminal
from stackbench.sandbox.sandbox import open_sandbox
from stackbench.sandbox.settings import Profile, SandboxSettings
folder = Path(sys.argv[1])
settings = SandboxSettings(
    profile=Profile(python="/usr/bin/python3"), tools={"uv": sys.argv[2]}, environment=json.loads(sys.argv[3]),
    templates_dir=str(folder / "templates"), scratch_dir=str(folder),
)
sandbox = open_sandbox(settings, "not-root")
term = Terminal(sandbox)
sandbox.write_file("/home/reader/work/hello.py", "print('hello from a file')\\n")
ran = term.run("id -un && python hello.py && echo written > out.txt")
served = term.start_background("python3 -m http.server 8000", settle_seconds=1)
print(json.dumps({"ran": ran.output, "out": sandbox.read_file("/home/reader/work/out.txt", 100),
                  "served": served.ok, "request": term.request("http://127.0.0.1:8000/", 20).output[:8],
                  "uid": sandbox.uid}))
term.close()
sandbox.close()
"""


def test_a_worker_that_is_not_root_runs_sandboxes_the_same_way(root_worker):
    """What the README recommends for production: the worker as an unprivileged user. The engines need nothing of
    root's; here they run as nobody, with Debian's Python and the packages of the app's virtualenv."""
    import json
    import shutil
    import sysconfig
    import tempfile

    from stackbench_site.configuration import find_uv

    if not Path("/usr/bin/python3").exists():
        pytest.skip("needs Debian's python3")
    folder = Path(tempfile.mkdtemp(prefix="stackbench-not-root-"))  # pytest's own folders are root's only
    os.chown(folder, 65534, 65534)
    try:
        done = subprocess.run(
            ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-c"]
            + [NOT_ROOT_WORKER, str(folder), find_uv(), json.dumps(sandbox_settings().environment)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd="/",
            env={
                "PATH": "/usr/bin:/bin",
                "PYTHONPATH": f"{settings.BASE_DIR}:{sysconfig.get_paths()['purelib']}",
                "HOME": str(folder),
            },
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["ran"] == "reader\nhello from a file\n" and seen["out"] == "written\n"
    assert seen["served"] and seen["request"].startswith("HTTP 200") and seen["uid"] == 65534


def test_a_runs_machine_states_every_limit_it_ran_under(make_sandbox):
    described = make_sandbox(max_files=1234, cpus=1.5).describe()
    assert "1,234 files" in described["limits"]
    assert ("1.5 CPU" in described["limits"]) == ("cpu" in described["cgroups"])
