"""The sandbox's network: registries reachable, the host and private networks not, slirp4netns locked away."""

import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from stackbench.auditing.terminal import Terminal
from stackbench.sandbox.network import _host_addresses as addresses
from stackbench.sandbox.network import network_routes
from stackbench.sandbox.prerequisites import SandboxUnavailable


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


def _host_addresses() -> list[str]:
    return [a for a in addresses() if not a.startswith("127.")]


@pytest.mark.slow
def test_the_hosts_loopback_and_its_databases_are_unreachable(terminal, host_server, root_worker):
    term = terminal()
    assert not _reaches(term, "127.0.0.1", host_server)
    for port in (5432, 6379):
        assert not _reaches(term, "127.0.0.1", port)
    for address in _host_addresses():
        assert not _reaches(term, address, 2024), address
    assert not _reaches(term, "10.0.2.2", host_server)
    assert "RTNETLINK answers: Operation not permitted" in term.run("ip route add 1.2.3.4 dev tap0").output


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_registry_at_the_hosts_own_address_opens_that_port_and_no_other(make_sandbox, root_worker):
    address = next((a for a in addresses() if a != "127.0.0.1"), None)
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


@pytest.mark.slow
def test_a_tun_device_only_root_may_open_is_a_clear_error_naming_the_fix(make_sandbox, root_worker):
    # Machines without udev leave /dev/net/tun 0600; slirp4netns runs as the run's own user.
    mode = os.stat("/dev/net/tun").st_mode & 0o777
    os.chmod("/dev/net/tun", 0o600)
    try:
        with pytest.raises(SandboxUnavailable, match=r"chmod 0666 /dev/net/tun"):
            make_sandbox()
    finally:
        os.chmod("/dev/net/tun", mode)


@pytest.mark.slow
def test_slirp4netns_reads_the_runs_packets_locked_in_a_sandbox_of_its_own(make_sandbox):
    sandbox = make_sandbox()
    slirp = sandbox._network.slirp.pid
    status = dict(
        line.split(":\t", 1) for line in Path(f"/proc/{slirp}/status").read_text().splitlines() if ":\t" in line
    )
    # It keeps one capability, in the run's user namespace only: binding a low port (CAP_NET_BIND_SERVICE).
    assert status["Seccomp"].strip() == "2" and status["CapEff"].strip() == "0000000000000400", status
    assert os.stat(f"/proc/{slirp}/ns/mnt").st_ino != os.stat("/proc/self/ns/mnt").st_ino
    assert os.listdir(f"/proc/{slirp}/root") != os.listdir("/")  # an empty root of its own, not the host's


def test_routes_prohibit_private_ranges_and_the_hosts_addresses_and_let_a_registry_through_on_its_ports_only():
    lines = network_routes(("10.1.2.3:8443", "192.168.7.7"))
    assert "route add prohibit 10.0.0.0/8" in lines and "route add prohibit 10.0.2.2/32" in lines
    for address in _host_addresses():
        assert f"route add prohibit {address}/32" in lines, address
    assert "route replace 10.1.2.3/32 via 10.0.2.2 dev tap0 table 100" in lines
    assert [line for line in lines if line.startswith("rule add")] == [
        "rule add to 10.1.2.3/32 ipproto tcp dport 8443 table 100 priority 100",
        "rule add to 192.168.7.7/32 ipproto tcp dport 443 table 100 priority 100",
        "rule add to 192.168.7.7/32 ipproto tcp dport 80 table 100 priority 100",
    ]


def test_a_registry_at_a_public_address_needs_no_route_of_its_own():
    assert not any("1.1.1.1" in line for line in network_routes(("1.1.1.1",)))
