"""A sandbox's network: slirp4netns gives its network namespace outbound NAT, so package registries are reachable;
prohibit routes (which the sandboxed user cannot change) keep the host's loopback, the host's own addresses and
private ranges out of reach, but for registries the settings name, and only on their own ports."""

import ipaddress
import json
import os
import socket
import subprocess

from stackbench.sandbox.launch import LAUNCH, RESTORE_STDERR, START_TIMEOUT, printed
from stackbench.sandbox.prerequisites import SandboxUnavailable, tool
from stackbench.sandbox.reader import SYSTEM_PATH

# Unreachable from a sandbox: private and link-local ranges (cloud metadata among them), shared address space,
# and slirp's gateway, which stands for the host's loopback. The host's own addresses are added per sandbox.
PROHIBITED_RANGES = (
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "169.254.0.0/16",
    "100.64.0.0/10",
    "198.18.0.0/15",
    "10.0.2.2/32",
)
SLIRP_GATEWAY, SLIRP_DNS = "10.0.2.2", "10.0.2.3"
REGISTRY_TABLE, REGISTRY_RULE = 100, 100  # the routing table and rule priority of registries at private addresses
# Without udev, /dev/net/tun stays 0600 and slirp4netns (run as the run's own user) cannot open it.
TUN_HINT = " (make /dev/net/tun usable by every user, as udev does: chmod 0666 /dev/net/tun; bin/setup does it)"


class Network:
    """The network of one sandbox: its slirp4netns (while it runs) and the descriptor that ends it when closed."""

    def __init__(self) -> None:
        self.slirp: subprocess.Popen[bytes] | None = None
        self.slirp_exit: int | None = None

    def start(self, owner: int, net: int, run_as: tuple[int, int] | None, reachable_hosts: tuple[str, ...]) -> None:
        """slirp4netns for outbound NAT, then the routes that keep the host and private networks out of reach.
        owner and net are descriptors of the sandbox's user namespace and network namespace; run_as is the run's
        own uid and gid when the worker is root (None: the worker's own)."""
        ready_read, ready_write = os.pipe()
        exit_read, self.slirp_exit = os.pipe()
        drop = (
            [tool("setpriv"), "--reuid", str(run_as[0]), "--regid", str(run_as[1]), "--clear-groups"]
            if run_as is not None
            else []
        )
        try:
            # slirp4netns reads every packet the run sends: it runs as the run's uid, with a keyring of its own,
            # in a sandbox of its own (an empty root) under its own seccomp filter.
            self.slirp = subprocess.Popen(
                [
                    *["/bin/bash", "-c", LAUNCH, "launch", str(max(owner, net, ready_write, exit_read) + 1), "--"],
                    *[tool("keyctl"), "session", "-"],
                    *["/bin/bash", "-c", RESTORE_STDERR, "restore", str(max(owner, net, ready_write, exit_read) + 1)],
                    *drop,
                    # As root of the sandbox's user namespace (only there): slirp4netns then locks itself into an
                    # empty mount namespace and drops every capability before it reads a packet.
                    tool("nsenter"),
                    f"--user=/proc/self/fd/{owner}",
                    "--preserve-credentials",
                    tool("slirp4netns"),
                    "--configure",
                    "--mtu=65520",
                    "--disable-host-loopback",
                    "--enable-sandbox",
                    "--enable-seccomp",
                    f"--ready-fd={ready_write}",
                    f"--exit-fd={exit_read}",
                    f"--userns-path=/proc/self/fd/{owner}",
                    "--netns-type=path",
                    f"/proc/self/fd/{net}",
                    "tap0",
                ],
                env={},
                pass_fds=(ready_write, exit_read, owner, net),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        finally:
            os.close(ready_write)
            os.close(exit_read)
        with os.fdopen(ready_read, "rb") as ready:
            if ready.read(1) != b"1":
                self.slirp.wait(timeout=START_TIMEOUT)
                reason = printed(self.slirp)
                if "/dev/net/tun" in reason:
                    reason += TUN_HINT
                raise SandboxUnavailable(f"slirp4netns could not give the sandbox a network: {reason}")
        routes = network_routes(reachable_hosts)
        done = subprocess.run(
            [
                *drop,
                tool("nsenter"),
                f"--user=/proc/self/fd/{owner}",
                f"--net=/proc/self/fd/{net}",
                "--preserve-credentials",
                tool("ip"),
                "-batch",
                "-",
            ],
            input="\n".join(routes) + "\n",
            capture_output=True,
            text=True,
            env={"PATH": SYSTEM_PATH},
            pass_fds=(owner, net),
            timeout=START_TIMEOUT,
        )
        if done.returncode != 0:
            raise SandboxUnavailable(f"the sandbox's routes could not be set: {done.stderr.strip()[-500:]}")

    def stop(self) -> None:
        """slirp4netns ends once the descriptor it watches closes; it is killed if it lingers."""
        if self.slirp_exit is not None:
            os.close(self.slirp_exit)
            self.slirp_exit = None
        if self.slirp is not None:
            try:
                self.slirp.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.slirp.kill()
                self.slirp.wait()
            self.slirp = None


def network_routes(reachable_hosts: tuple[str, ...]) -> list[str]:
    """`ip -batch` lines: prohibit the private ranges and the host's own addresses; let a registry that resolves
    to a private address through on its own ports only (443 and 80, or the port it is named with), by a rule
    that sends just those ports to a table of their own: a mirror on the host's address opens no other service
    of the host."""
    lines = [f"route add prohibit {cidr}" for cidr in PROHIBITED_RANGES]
    lines += [
        f"route add prohibit {address}/32"
        for address in _host_addresses()
        if not ipaddress.ip_address(address).is_loopback
    ]
    for host, ports in _registry_endpoints(reachable_hosts):
        for address in _resolve(host):
            if ipaddress.ip_address(address).is_private:
                lines.append(f"route replace {address}/32 via {SLIRP_GATEWAY} dev tap0 table {REGISTRY_TABLE}")
                lines += [
                    f"rule add to {address}/32 ipproto tcp dport {port} table {REGISTRY_TABLE} priority {REGISTRY_RULE}"
                    for port in ports
                ]
    return list(dict.fromkeys(lines))


def _registry_endpoints(reachable_hosts: tuple[str, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """(host, ports) for each registry: "host:port" names its port, a bare host means HTTPS and HTTP."""
    endpoints: list[tuple[str, tuple[int, ...]]] = []
    for entry in reachable_hosts:
        host, _, port = entry.rpartition(":") if entry.rpartition(":")[2].isdigit() else (entry, "", "")
        endpoints.append((host, (int(port),) if port else (443, 80)))
    return endpoints


def _host_addresses() -> list[str]:
    try:
        shown = subprocess.run(
            [tool("ip"), "-json", "-4", "addr"], capture_output=True, text=True, timeout=10, env={"PATH": SYSTEM_PATH}
        )
        return [info["local"] for link in json.loads(shown.stdout) for info in link.get("addr_info", [])]
    except (OSError, ValueError, subprocess.SubprocessError):
        return []


def _resolve(host: str) -> list[str]:
    try:
        # An AF_INET address is (host, port): its host is always a str.
        return sorted({str(info[4][0]) for info in socket.getaddrinfo(host, 443, socket.AF_INET, socket.SOCK_STREAM)})
    except OSError:
        return []
