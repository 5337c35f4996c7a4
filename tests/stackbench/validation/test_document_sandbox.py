"""One document's sandbox and its reader virtualenv, offline against wheels the tests build."""

import dataclasses
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from stackbench.sandbox.network import _host_addresses
from stackbench.validation.document_sandbox import DocumentSandbox
from stackbench_site.configuration import validation_options
from tests.builders import build_wheel

pytestmark = pytest.mark.slow


@pytest.fixture
def document(offline):
    document = DocumentSandbox(offline, "guide")
    yield document
    document.close()


def test_an_install_that_works_is_probed_for_the_modules_and_extras_the_library_brings(document):
    assert document.install(["sbdemo==1.0.0"]).ok
    probe = document.probe(["sbdemo", "sbfancy"], "sbdemo")
    assert probe["found"] == {"sbdemo": True, "sbfancy": False}
    assert probe["library_modules"] == ["sbdemo"] and any("extra" in line for line in probe["requires"])


def test_an_install_says_why_it_failed(document):
    unpublished = document.install(["sbnowhere==1.0"])
    assert not unpublished.ok and unpublished.not_found and "sbnowhere" in unpublished.message
    too_new = document.install(["sbdemo==3.0.0"])
    assert not too_new.ok and too_new.wrong_python


def test_sandbox_paths_are_shown_as_the_reader_knows_them(document):
    inside = f"{document.sandbox.home}/.venv/lib/python3.11/site-packages/sbdemo/__init__.py"
    assert document.readable(f"File {inside}, line 3") == "File site-packages/sbdemo/__init__.py, line 3"


def test_a_package_that_only_gathers_others_is_not_taken_for_somebody_elses_for_lacking_a_module(tmp_path, wheelhouse):
    build_wheel(tmp_path, "sbbundle", "1.0.0", None, requires=["sbplain"])
    options = validation_options(timeout=10, find_links=[wheelhouse, tmp_path], offline=True, num_workers=1)
    document = DocumentSandbox(options, "guide")
    try:
        looked = document.provides({"sbbundle": ["sbbundle.cli"], "sbplain": ["sbplain", "sbother"]})
    finally:
        document.close()
    assert looked == {"sbplain": True, "sbother": False}, "the bundle's modules are in what it gathers: unknown"


class _DataFiles(BaseHTTPRequestHandler):
    def do_GET(self):
        found = self.path == "/data/cities.csv"
        self.send_response(200 if found else 404)
        self.end_headers()
        self.wfile.write(b"id,name\n1,Oslo\n" if found else b"no such file")

    def log_message(self, *args):
        pass


def test_a_file_the_page_links_is_saved_by_the_reader_where_they_run_the_examples_and_a_refusal_says_why(wheelhouse):
    address = next(iter(a for a in _host_addresses() if not a.startswith("127.")), None)
    if address is None:
        pytest.skip("the machine has no address but its loopback")
    server = HTTPServer((address, 0), _DataFiles)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    site = f"{address}:{server.server_address[1]}"
    options = validation_options(timeout=10, find_links=[wheelhouse], offline=False, num_workers=1)
    options.sandbox = dataclasses.replace(options.sandbox, reachable_hosts=(site,))
    document = DocumentSandbox(options, "guide")
    try:
        work = document.sandbox.work
        assert document.download(f"http://{site}/data/cities.csv", f"{work}/data/cities.csv") is None
        assert document.sandbox.read_file(f"{work}/data/cities.csv", 100) == "id,name\n1,Oslo\n"
        refused = document.download(f"http://{site}/data/towns.csv", f"{work}/towns.csv")
        assert refused and "404" in refused and document.sandbox.read_file(f"{work}/towns.csv", 100) is None
    finally:
        document.close()
        server.shutdown()


def test_an_offline_validation_downloads_nothing_and_says_so(document):
    assert document.download("https://example.org/cities.csv", f"{document.sandbox.work}/c.csv") == (
        "validation runs offline"
    )
