"""The system calls a tutorial never needs are refused, each with an error; what it does need works."""

import os
import shlex
import subprocess
import sys

import pytest

from stackbench.sandbox import seccomp_filter


@pytest.mark.slow
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


# Loads the filter into a fresh interpreter (as bubblewrap loads it into a sandbox's command), then tries calls.
FILTERED = """
import ctypes, errno, os, subprocess, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
program = sys.stdin.buffer.read()


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


buffer = ctypes.create_string_buffer(program, len(program))
fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_char_p))
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


def call(result):
    return errno.errorcode.get(ctypes.get_errno(), "") if result == -1 else "allowed"


print("userns", call(libc.unshare(0x10000000)))
print("io_uring", call(libc.syscall(425, 1, 0)))
print("keyctl", call(libc.syscall(250, 0, -3, 0)))
t = threading.Thread(target=lambda: None)
t.start()
t.join()
print("thread and process", subprocess.run(["true"]).returncode)
"""


def test_the_filter_itself_refuses_new_user_namespaces_io_uring_and_keyrings_but_not_threads_or_processes():
    if os.uname().machine != "x86_64":
        pytest.skip("the probe names x86_64 system call numbers")
    program = seccomp_filter.program()
    assert program and len(program) % 8 == 0  # classic BPF: 8 bytes an instruction
    done = subprocess.run([sys.executable, "-c", FILTERED], input=program, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().splitlines() == [
        "userns EPERM",
        "io_uring ENOSYS",
        "keyctl EPERM",
        "thread and process 0",
    ]
