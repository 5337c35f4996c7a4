"""The system calls a tutorial never needs, refused to every process of a sandbox (bubblewrap loads the filter
before the command starts; libseccomp, through pyseccomp, compiles it for this machine's architecture).

The sandbox's namespaces already take away what these calls could reach; the filter removes the kernel's attack
surface behind them, and what is left of the host's: no new user namespaces (the way to mount filesystems and
reach kernel code unprivileged users normally cannot), no keyrings (a sandbox's processes must not hold or find
keys), no tracing or reading other processes' memory, no io_uring, no kernel modules, mounts, BPF programs,
performance counters, userfaultfd, kexec or reboot. Each is refused with an error (EPERM, or ENOSYS where
programs fall back to something else), never by killing the process."""

import errno
import functools
import tempfile
from typing import Any

CLONE_NEWUSER = 0x10000000
REFUSED = (
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "setns",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "open_by_handle_at",
    "iopl",
    "ioperm",
)
# Programs (libuv, liburing users) and the C library (clone3, for threads and posix_spawn) fall back when these
# say "not implemented".
NOT_IMPLEMENTED = ("io_uring_setup", "io_uring_enter", "io_uring_register", "clone3")


class SeccompUnavailable(Exception):
    """libseccomp cannot be loaded here; the message names the fix."""


@functools.cache
def program() -> bytes:
    """The compiled filter (classic BPF), for bubblewrap's --seccomp."""
    try:
        import pyseccomp as seccomp  # type: ignore[import-untyped]  # ships no type information
    except (ImportError, OSError) as exc:
        raise SeccompUnavailable(
            f"libseccomp could not be loaded ({exc}): install Debian's libseccomp2 (bin/setup does, with slirp4netns)"
        ) from None
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    # A program of another architecture (32-bit x86 on x86_64) would reach the kernel under other numbers.
    rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.ERRNO(errno.ENOSYS))
    for name in REFUSED:
        _refuse(rules, seccomp.ERRNO(errno.EPERM), name)
    for name in NOT_IMPLEMENTED:
        _refuse(rules, seccomp.ERRNO(errno.ENOSYS), name)
    new_user_namespace = seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
    for name in ("unshare", "clone"):
        _refuse(rules, seccomp.ERRNO(errno.EPERM), name, new_user_namespace)
    with tempfile.TemporaryFile() as compiled:
        rules.export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()


def _refuse(rules: Any, action: int, name: str, *conditions: Any) -> None:
    # rules and conditions are pyseccomp's SyscallFilter and Args: Any, as pyseccomp is untyped.
    try:
        rules.add_rule(action, name, *conditions)
    except OSError:
        pass  # no such call on this architecture (iopl on arm64): nothing to refuse
