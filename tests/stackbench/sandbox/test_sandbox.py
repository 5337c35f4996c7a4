"""The sandbox, tried the way a hostile or careless tutorial would: real bubblewrap, slirp4netns, cgroups and
processes, no mocks. The worker runs as root here (as `bin/start` runs it), which is what the isolation must
hold against."""

import ctypes
import os
import shlex
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from django.conf import settings

from stackbench.auditing.terminal import Terminal
from stackbench.sandbox.capture import cap_output
from stackbench.sandbox.sandbox import HOME, WORK, SandboxSettings, SandboxUnavailable, bubblewrap_problem, open_sandbox
from stackbench_site.configuration import sandbox_settings
from tests.builders import processes_of, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def terminal(make_sandbox):
    made = []

    def make(**limits):
        term = Terminal(make_sandbox(**{"timeout": 20, **limits}))
        made.append(term)
        return term

    yield make
    for term in made:
        term.close()


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"host server")

    def log_message(self, *args):
        pass


@pytest.fixture
def host_server():
    """A server on the host's loopback (as a dashboard, a database or a broker would be)."""
    server = HTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def _reaches(term, host: str, port: int) -> bool:
    probe = f"timeout 5 bash -c 'exec 3<>/dev/tcp/{host}/{port}' 2>/dev/null && echo REACHED || echo REFUSED"
    return "REACHED" in term.run(probe).output


def test_the_environment_is_an_allowlist_with_the_readers_own_toolchain_first(terminal, monkeypatch):
    for name, value in (
        ("SECRET_KEY", "s3cret-key-value"),
        ("DATABASE_URL", "postgres://u:pw@db/x"),
        ("CELERY_BROKER_URL", "redis://:pw@broker/0"),
        ("ANTHROPIC_API_KEY", "sk-ant-123"),
    ):
        monkeypatch.setenv(name, value)
    term = terminal()
    output = term.run("env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null").output
    for secret in ("s3cret-key-value", "postgres://", "redis://", "sk-ant-123", "DJANGO_SETTINGS_MODULE"):
        assert secret not in output
    assert f"PATH={HOME}/.venv/bin:{HOME}/.npm-global/bin:" in output and f"HOME={HOME}" in output
    assert term.run("id -un; command -v python pip").output.split() == [
        "reader",
        f"{HOME}/.venv/bin/python",
        f"{HOME}/.venv/bin/pip",
    ]


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


def test_the_app_folder_var_and_the_workers_home_are_not_there(terminal, root_worker):
    term = terminal()
    secret = settings.VAR_DIR / "secret_key"
    for path in (
        secret,
        settings.VAR_DIR / "stackbench.sqlite3",
        settings.BASE_DIR / "manage.py",
        settings.BASE_DIR / "stackbench_site" / "settings.py",
        settings.VAR_DIR / "admin_password.txt",
    ):
        assert "rc=0" not in term.run(f"cat {path} > /dev/null; echo rc=$?").output, path
    assert term.run(f"ls -A {settings.BASE_DIR}").exit_code != 0
    assert term.run(f"touch {settings.BASE_DIR}/pwned; echo rc=$?").output.strip() != "rc=0"
    assert not (settings.BASE_DIR / "pwned").exists()
    assert term.run("ls -A /root").exit_code != 0


def test_the_host_shows_only_what_a_newcomers_machine_has(terminal, root_worker):
    term = terminal()
    top = set(term.run("ls -A /").output.split())
    assert top <= {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "home", "tmp", "var", "run"} | {
        "proc",
        "dev",
    }, top
    for absent in ("/sys", "/srv", "/opt", "/root", "/var/log", "/var/lib", "/work"):
        assert term.run(f"test -e {absent}").exit_code != 0, absent
    # What others may not read on the host is not even there to be named.
    assert term.run("wc -c < /etc/shadow").output.strip() == "0"
    assert term.run("ls -A /etc/ssl/private").output.strip() == ""
    # The reader's tools still work without them.
    assert term.run("nproc && python3 -c 'import os; print(os.cpu_count())' && node -e 'console.log(1)'").ok


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


def test_the_hosts_loopback_and_its_databases_are_unreachable(terminal, host_server, root_worker):
    term = terminal()
    assert not _reaches(term, "127.0.0.1", host_server)
    for port in (5432, 6379):
        assert not _reaches(term, "127.0.0.1", port)
    for address in _host_addresses():
        assert not _reaches(term, address, 2024), address
    assert not _reaches(term, "10.0.2.2", host_server)
    assert "RTNETLINK answers: Operation not permitted" in term.run("ip route add 1.2.3.4 dev tap0").output


def test_any_port_is_free_inside_even_one_the_host_holds(terminal):
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        holder.bind(("127.0.0.1", 8000))
    except OSError:
        holder.close()
        holder = None  # something of the machine's holds it already: all the better for this test
    try:
        term = terminal()
        served = term.start_background("python3 -m http.server 8000 --bind 127.0.0.1", settle_seconds=1.5)
        assert served.ok and "still running" in served.output
        answer = term.run(
            "python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:8000/').status)\""
        )
        assert answer.output.strip() == "200"
    finally:
        if holder:
            holder.close()


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


def test_a_daemon_does_not_outlive_its_run(make_sandbox, root_worker):
    sandbox = make_sandbox()
    term = Terminal(sandbox)
    term.run("setsid nohup sleep 600 >/dev/null 2>&1 & disown; (setsid bash -c 'sleep 600' &) ; echo started")
    assert processes_of(sandbox.uid)
    term.close()
    started = time.monotonic()
    sandbox.close()
    wait_for(lambda: not processes_of(sandbox.uid), timeout=2, message="the daemons to end with the run")
    assert time.monotonic() - started < 2


def test_a_tun_device_only_root_may_open_is_a_clear_error_naming_the_fix(make_sandbox, root_worker):
    # Machines without udev leave /dev/net/tun 0600; slirp4netns runs as the run's own user.
    mode = os.stat("/dev/net/tun").st_mode & 0o777
    os.chmod("/dev/net/tun", 0o600)
    try:
        with pytest.raises(SandboxUnavailable, match=r"chmod 0666 /dev/net/tun"):
            make_sandbox()
    finally:
        os.chmod("/dev/net/tun", mode)


def test_strays_are_killed_around_a_process_that_must_live_on(make_sandbox):
    sandbox = make_sandbox()
    kept = sandbox.spawn(["sleep", "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    stray = sandbox.run(["bash", "-c", "setsid sleep 600 >/dev/null 2>&1 & echo $!"], timeout=10)
    assert stray.returncode == 0
    sandbox.kill_strays(keep={kept.pid})
    left = sandbox.run(["bash", "-c", "ps -eo args= | grep -c '^sleep 600'"], timeout=10).stdout.strip()
    assert left == "1", "only the kept sleep is left"
    assert kept.popen.poll() is None
    kept.kill()


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


def test_filling_the_disk_stops_the_command_and_a_full_disk_takes_no_more(terminal):
    term = terminal(disk_bytes=50 * 1024**2, file_size_bytes=20 * 1024**2, timeout=60)
    result = term.run("for i in $(seq 1 20); do head -c 10000000 /dev/urandom > f$i.bin; sleep 0.3; done")
    assert result.disk_limit and "filled the sandbox's disk" in result.output
    # As on a full disk: what adds nothing still runs, what writes more is stopped at once.
    assert term.run("echo fresh").output == "fresh\n"
    started = time.monotonic()
    assert term.run("head -c 19000000 /dev/urandom > more.bin; sleep 30").disk_limit
    assert time.monotonic() - started < 10
    assert term.run("rm -f f*.bin more.bin && echo freed").output == "freed\n"
    assert term.run("head -c 10000000 /dev/urandom > again.bin && echo written").output == "written\n"


def test_a_step_making_files_without_end_is_stopped_near_the_file_limit(terminal):
    term = terminal(max_files=20_000, timeout=120)
    maker = "python3 -c \"import os\nfor i in range(10**7): open(f'f{i}', 'w').close()\""
    result = term.run(f"mkdir many && cd many && {maker}")
    assert result.disk_limit and "filled the sandbox's disk" in result.output
    made = int(term.run("ls -f ~/work/many | wc -l").output)
    assert 20_000 < made < 20_000 + 60_000, made
    # Each later step starts over the limit and may not add: a dozen steps cannot each add as many again.
    for _ in range(3):
        assert term.run(f"cd ~/work/many && {maker.replace('f{i}', 'g{i}')}").disk_limit
    assert int(term.run("ls -f ~/work/many | wc -l").output) < made + 3 * 10_000


def test_cancel_ends_every_process_of_the_run_within_five_seconds(make_sandbox, root_worker):
    sandbox = make_sandbox()
    stop = threading.Event()
    term = Terminal(sandbox, should_stop=stop.is_set)
    term.start_background("sleep 600", settle_seconds=0.3)
    threading.Timer(0.5, stop.set).start()
    result = term.run("sleep 300 & sleep 300")
    assert result.cancelled
    started = time.monotonic()
    term.close()
    sandbox.close()
    # Killed at once; gone once the machine's init reaps them, which on some machines takes a second or two.
    wait_for(lambda: not processes_of(sandbox.uid), timeout=5, message="every process of the run to end")
    assert time.monotonic() - started < 5


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


def test_without_bubblewrap_sandboxes_are_refused_with_the_fix(monkeypatch):
    from stackbench.sandbox import sandbox as engine

    monkeypatch.setattr(engine, "tool", lambda name: name)
    engine.bubblewrap_problem.cache_clear()
    try:
        with pytest.raises(
            SandboxUnavailable, match="install Debian's bubblewrap, slirp4netns.*STACKBENCH_UNCONFINED=1"
        ):
            open_sandbox(SandboxSettings(), "x")
    finally:
        monkeypatch.undo()
        engine.bubblewrap_problem.cache_clear()
    assert bubblewrap_problem() is None


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


def test_output_is_capped_keeping_the_end():
    text, cut = cap_output(b"a" * 1000 + b"THE END", 100)
    assert cut and text.endswith("THE END") and "bytes cut" in text
    assert cap_output(b"short", 100) == ("short", False)
    assert cap_output(b"a\0b", 100) == ("a\ufffdb", False)


def _host_addresses() -> list[str]:
    from stackbench.sandbox.sandbox import _host_addresses as addresses

    return [a for a in addresses() if not a.startswith("127.")]


def test_workspaces_of_a_dead_worker_are_swept_those_of_a_live_one_kept(tmp_path):
    import os

    from stackbench.sandbox.sandbox import sweep_leftovers

    dead = tmp_path / "stackbench_sandbox_999999999_claude_wt_x_ab12"
    alive = tmp_path / f"stackbench_sandbox_{os.getpid()}_claude_wt_x_cd34"
    for folder in (dead, alive):
        (folder / "work").mkdir(parents=True)
    lingering = subprocess.Popen(["sleep", "600"], cwd=dead / "work", start_new_session=True)
    kept = subprocess.Popen(["sleep", "600"], cwd=alive / "work", start_new_session=True)
    sweep_leftovers(str(tmp_path))
    assert not dead.exists() and alive.exists()
    assert lingering.wait(timeout=5) == -9, "a process still working in a dead worker's folder is ended"
    assert kept.poll() is None
    kept.kill()


def test_processes_left_in_a_dead_workers_group_are_ended_and_the_group_removed():
    from stackbench.sandbox.cgroups import FOLDER, _parent_for, sweep_leftovers

    parent = _parent_for("pids")
    if parent is None:
        pytest.skip("needs a pids cgroup the worker may create groups in")
    group = parent / FOLDER / "999999999-leftover"
    group.mkdir(parents=True, exist_ok=True)
    lingering = subprocess.Popen(["sleep", "600"], start_new_session=True)
    (group / "cgroup.procs").write_text(str(lingering.pid))
    sweep_leftovers()
    assert lingering.wait(timeout=5) == -9
    assert not group.exists()


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


def test_a_registry_at_the_hosts_own_address_opens_that_port_and_no_other(make_sandbox, root_worker):
    from stackbench.sandbox.sandbox import _host_addresses

    address = next((a for a in _host_addresses() if a != "127.0.0.1"), None)
    if address is None:
        pytest.skip("the machine has no address but its loopback")
    registry, database = (HTTPServer((address, 0), _Hello) for _ in range(2))
    for server in (registry, database):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        term = Terminal(make_sandbox(timeout=20, reachable_hosts=(f"{address}:{registry.server_address[1]}",)))
        assert _reaches(term, address, registry.server_address[1])
        assert not _reaches(term, address, database.server_address[1])
        term.close()
    finally:
        registry.shutdown()
        database.shutdown()


def test_calls_a_tutorial_never_needs_are_refused_and_what_it_does_need_works(terminal):
    term = terminal()
    probe = (
        "import ctypes, errno, os, threading, subprocess\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def call(*args):\n"
        "    return errno.errorcode.get(ctypes.get_errno(), '') if libc.syscall(*args) == -1 else 'allowed'\n"
        "print('keyctl', call(250, 0, 0))\n"  # KEYCTL_GET_KEYRING_ID on x86_64; arm64 numbers differ
        "print('ptrace', call(101, 16, os.getppid()))\n"
        "print('io_uring', call(425, 1, 0))\n"
        "print('userns', call(272, 0x10000000))\n"
        "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
        "print('thread ok', subprocess.run(['true']).returncode)\n"
    )
    if os.uname().machine != "x86_64":
        pytest.skip("the probe names x86_64 system call numbers")
    output = term.run(f"python3 -c {shlex.quote(probe)}").output
    assert output.split("\n")[:5] == ["keyctl EPERM", "ptrace EPERM", "io_uring ENOSYS", "userns EPERM", "thread ok 0"]
    assert "Operation not permitted" in term.run("unshare -U true").output


def test_a_run_gets_only_its_share_of_the_cpus(terminal):
    from stackbench.sandbox.cgroups import _parent_for

    if _parent_for("cpu") is None:
        pytest.skip("the machine lets the worker make no cpu cgroup")
    term = terminal(cpus=0.5, timeout=30)
    busy = "for i in 1 2 3 4; do timeout 2 sh -c 'while :; do :; done' & done; wait"
    timed = term.run(f"TIMEFORMAT='%U %S'; time ( {busy} )").output.split()
    used = float(timed[-2]) + float(timed[-1])
    assert used < 1.5, f"{used} s of CPU in 2 s with half a CPU"


def test_the_leftover_sweep_follows_no_link_named_like_a_leftover(tmp_path):
    from stackbench.sandbox.sandbox import sweep_leftovers

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    working = subprocess.Popen(["sleep", "600"], cwd=elsewhere, start_new_session=True)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    os.symlink(elsewhere, scratch / "stackbench_sandbox_999999999_planted")
    try:
        sweep_leftovers(str(scratch))
        with pytest.raises(subprocess.TimeoutExpired):
            working.wait(timeout=1)
        assert elsewhere.is_dir()
    finally:
        working.kill()


def test_on_a_fresh_machine_the_first_sandbox_makes_the_template_and_later_ones_get_private_copies(tmp_path):
    import dataclasses

    fresh = dataclasses.replace(sandbox_settings(), templates_dir=str(tmp_path / "templates"))
    first = open_sandbox(fresh, "first")
    try:
        (template,) = (tmp_path / "templates").iterdir()
        assert first.run(["python", "-c", "print('first')"], timeout=60).stdout.strip() == "first"
    finally:
        first.close()
    second = open_sandbox(fresh, "second")
    try:
        (pip,) = template.glob("lib/python*/site-packages/pip/__init__.py")
        relative = pip.relative_to(template)
        assert second.run(["python", "-c", "import pip"], timeout=60).returncode == 0
        assert (second.root / "home" / ".venv" / relative).stat().st_ino != pip.stat().st_ino
    finally:
        second.close()


NOT_ROOT_WORKER = """
import json, sys
from pathlib import Path
from stackbench.auditing.terminal import Terminal
from stackbench.sandbox.sandbox import Profile, SandboxSettings, open_sandbox
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


def test_what_the_launcher_prints_reaches_the_command_s_stderr_but_keyctl_s_notice_does_not(make_sandbox):
    sandbox = make_sandbox()
    refused = sandbox.spawn(["true"], cwd="/no/such/folder", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, printed = refused.popen.communicate(timeout=30)
    assert refused.popen.returncode != 0 and b"chdir" in printed and b"keyring" not in printed
    ran = sandbox.spawn(["sh", "-c", "echo out; echo err >&2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert ran.popen.communicate(timeout=30) == (b"out\n", b"err\n")


def test_slirp4netns_reads_the_runs_packets_locked_in_a_sandbox_of_its_own(make_sandbox):
    sandbox = make_sandbox()
    slirp = sandbox._slirp.pid
    status = dict(
        line.split(":\t", 1) for line in Path(f"/proc/{slirp}/status").read_text().splitlines() if ":\t" in line
    )
    # It keeps one capability, in the run's user namespace only: binding a low port (CAP_NET_BIND_SERVICE).
    assert status["Seccomp"].strip() == "2" and status["CapEff"].strip() == "0000000000000400", status
    assert os.stat(f"/proc/{slirp}/ns/mnt").st_ino != os.stat("/proc/self/ns/mnt").st_ino
    assert os.listdir(f"/proc/{slirp}/root") != os.listdir("/")  # an empty root of its own, not the host's


def test_a_runs_machine_states_every_limit_it_ran_under(make_sandbox):
    described = make_sandbox(max_files=1234, cpus=1.5).describe()
    assert "1,234 files" in described["limits"]
    assert ("1.5 CPU" in described["limits"]) == ("cpu" in described["cgroups"])
