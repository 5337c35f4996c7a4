"""One document's machine: a sandbox whose reader virtualenv gets the library and the page's packages, probed for
what imports, with the page runner (page_runner.py) written into it."""

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from stackbench.docs.distributions import normalized
from stackbench.sandbox.capture import read_capped
from stackbench.sandbox.reader import TOOLS
from stackbench.sandbox.sandbox import open_sandbox
from stackbench.sandbox.watch import Watch
from stackbench.validation.install_plan import previous_major_bound, suspected_dependencies
from stackbench.validation.options import ValidationOptions

INSTALL_TIMEOUT = 600
RUNNER_SOURCE = (Path(__file__).parent / "page_runner.py").read_text()
NOT_FOUND = re.compile(
    r"not found in the package registry|No matching distribution found|Could not find a version that satisfies|"
    r"404 Not Found|was not found in the provided package locations",
    re.IGNORECASE,
)
WRONG_PYTHON = re.compile(
    r"Requires-Python|does not satisfy Python|requires a different Python|(?:requires|depends on) Python\s*[<>=!~]",
    re.IGNORECASE,
)
PROBE = r"""
import importlib.util, json, sys
from importlib import metadata
wanted = json.loads(sys.argv[1])
found = {}
for module in wanted["modules"]:
    try:
        found[module] = importlib.util.find_spec(module) is not None
    except Exception:
        found[module] = False
library = wanted["library"]
try:
    requires = metadata.requires(library) or []
except metadata.PackageNotFoundError:
    requires = []
tops = sorted({top for top, dists in metadata.packages_distributions().items()
               if any(d.lower().replace("_", "-") == library.lower().replace("_", "-") for d in dists)})
print(json.dumps({"found": found, "requires": requires, "library_modules": tops}))
"""

# A file the page links for its reader to save, fetched by the reader inside (never by the worker: the address is
# the page's), and refused past a size no docs example needs.
DOWNLOAD = r"""
import os, sys, urllib.request
url, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
with urllib.request.urlopen(url, timeout=30) as response:
    data = response.read(limit + 1)
if len(data) > limit:
    sys.exit(f"it is larger than {limit // 1024**2} MB")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as file:
    file.write(data)
"""
DOWNLOAD_LIMIT = 20 * 1024**2
DOWNLOAD_TIMEOUT = 60

# Whether the library imports as its reader imports it (each of its top-level modules), and what it depends on: its
# requirements, the installed distributions' versions and their top-level modules (normalized names).
LIBRARY_IMPORTS = r"""
import importlib, json, re, sys, traceback
from importlib import metadata
library = sys.argv[1]
def key(name):
    return re.sub(r"[-_.]+", "-", name).lower()
modules = {}
for top, dists in metadata.packages_distributions().items():
    for dist in dists:
        modules.setdefault(key(dist), []).append(top)
error = ""
for top in sorted(modules.get(key(library), [])):
    try:
        importlib.import_module(top)
    except Exception:
        error = traceback.format_exc()
        break
try:
    requires = metadata.requires(library) or []
except metadata.PackageNotFoundError:
    requires = []
installed = {key(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
print(json.dumps({"error": error, "requires": requires, "installed": installed, "modules": modules}))
"""

# Which modules a folder of unpacked packages holds (their top-level names), without importing anything. A
# distribution whose files (its RECORD) hold no module at all only gathers others as its dependencies (a meta
# package): that it lacks the module tells nothing.
LOOK_UP = r"""
import importlib.machinery, json, os, re, sys
wanted = json.loads(sys.argv[1])
folder = wanted["folder"]
holds = {}
for entry in os.listdir(folder):
    if not entry.endswith(".dist-info"):
        continue
    name = re.sub(r"[-_.]+", "-", entry[: -len(".dist-info")].rsplit("-", 1)[0]).lower()
    try:
        with open(os.path.join(folder, entry, "RECORD")) as record:
            tops = {line.split(",")[0].split("/")[0] for line in record}
    except OSError:
        continue
    holds[name] = any(t and not t.endswith(".dist-info") and t not in ("..", "bin", "__pycache__") for t in tops)
found = {}
for module, distribution in wanted["modules"].items():
    if importlib.machinery.PathFinder.find_spec(module.split(".")[0], [folder]) is not None:
        found[module] = True
    elif holds.get(distribution, True):
        found[module] = False
print(json.dumps(found))
"""


@dataclass
class Install:
    """How an install went."""

    ok: bool
    message: str
    seconds: float
    tool: str
    log: str = ""
    not_found: bool = False  # the index has no such package (as opposed to: it would not install)
    wrong_python: bool = False  # it does not support this Python (its Requires-Python)
    held_back: str = ""  # why a dependency was installed below its newest release (the library did not import)


@dataclass(frozen=True)
class PreparedVenv:
    """A virtualenv the worker keeps with a requirement installed in it, for sandboxes to start from a copy of."""

    path: Path
    requirement: str
    install: Install  # how its one install went


class DocumentSandbox:
    """One document's machine: a sandbox whose reader virtualenv gets the library, and the page runner."""

    def __init__(
        self,
        options: ValidationOptions,
        label: str,
        should_stop: Callable[[], bool] = lambda: False,
        prepared: PreparedVenv | None = None,
    ) -> None:
        self.options = options
        self.should_stop = should_stop
        self.prepared = prepared
        self.sandbox = open_sandbox(
            options.sandbox,
            f"validate_{label}",
            read_only=options.find_links,
            prepared_venv=prepared.path if prepared else None,
        )
        self.python = f"{self.sandbox.home}/.venv/bin/python"
        # Host pids of the page runners started in the sandbox (the page's own, and a second one a failed example's
        # second chance runs in): what one request leaves behind is cleaned up, never another runner.
        self.runners: set[int] = set()
        self.runner_path = f"{self.sandbox.state}/page_runner.py"
        self.sandbox.write_file(self.runner_path, RUNNER_SOURCE)

    def live_runners(self) -> set[int]:
        """The runners not gone yet. One that was ended stays until its pid is gone: ended, it lingers a moment
        before it is reaped, and a cleanup that took it for a stray it cannot kill would end the whole sandbox
        (the other runner with it)."""
        self.runners = {pid for pid in self.runners if os.path.exists(f"/proc/{pid}")}
        return self.runners

    def _run(
        self, command: list[str], timeout: float, cwd: str | None = None, env: dict[str, str] | None = None
    ) -> tuple[int | None, str, bool]:
        """(exit status, output, timed out) of a setup command (output to the worker's own file, out of the
        sandbox's reach: a flood costs no memory, and it reads back only what the command printed)."""
        watch = Watch(self.sandbox, timeout, self.should_stop)
        with self.sandbox.private_file("setup") as log:
            spawned = self.sandbox.spawn(
                command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
            stop: str | None = None
            while spawned.popen.poll() is None:
                stop = watch.interruption()
                if stop:
                    spawned.kill()
                    break
                time.sleep(0.05)
            spawned.popen.wait()
            self.sandbox.kill_strays()
            output, _ = read_capped(log.fileno(), self.options.output_cap)
        return (None if stop else spawned.popen.returncode), output, stop == "timeout"

    def prepared_with(self, requirement: str) -> Install | None:
        """The install already made for this sandbox's virtualenv (a copy of one prepared for the batch), if it
        holds requirement."""
        return self.prepared.install if self.prepared and self.prepared.requirement == requirement else None

    def install(self, requirements: list[str], apart: str | None = None) -> Install:
        """Install into the reader's virtualenv; with apart (a folder), unpack the requirements alone into it
        instead, without their dependencies, to see what they hold."""
        started = time.monotonic()
        uv = "uv" in self.sandbox.settings.tools
        links = [arg for folder in self.sandbox.read_only for arg in ("--find-links", folder)]
        offline = ["--no-index"] if self.options.offline else []
        alone = ["--no-deps", "--target", apart] if apart else []
        if uv:
            command = [
                f"{TOOLS}/uv",
                "pip",
                "install",
                "--quiet",
                "--python",
                self.python,
                *links,
                *offline,
                *alone,
                *requirements,
            ]
            env = {**self.sandbox.environment, "UV_CACHE_DIR": f"{self.sandbox.home}/.cache/uv"}
        else:
            command = [self.python, "-m", "pip", "install", "--quiet", *links, *offline, *alone, *requirements]
            env = None
        code, output, timed_out = self._run(command, INSTALL_TIMEOUT, cwd=self.sandbox.home, env=env)
        tool = "uv" if uv else "pip"
        if code == 0:
            return Install(True, "", time.monotonic() - started, tool)
        log = f"timed out after {INSTALL_TIMEOUT} s" if timed_out else output[-4000:].strip()
        return Install(
            False,
            f"Installing {' '.join(requirements)} failed",
            time.monotonic() - started,
            tool,
            log,
            bool(NOT_FOUND.search(output)),
            bool(WRONG_PYTHON.search(output)),
        )

    def install_library(self, requirement: str) -> Install:
        """The library installed as its reader installs it. When it then fails to import, and the newest release
        of one of its dependencies is why, the reader installs that dependency's previous series (the newest
        release before the one the installer picked) and goes on, so the page's examples are judged on their own:
        each dependency the error names first, then the others, until the library imports. held_back says so."""
        installed = self.install([requirement])
        library = Requirement(requirement).name
        found = self._library_imports(library) if installed.ok else None
        if not found or not found["error"]:
            return installed
        error = found["error"].strip()
        for dependency, version in suspected_dependencies(
            found["requires"], found["installed"], found["modules"], error
        ):
            bound = previous_major_bound(version)
            if bound is None:
                continue
            if self.install([requirement, f"{dependency}{bound}"]).ok:
                again = self._library_imports(library)
                if again and not again["error"]:
                    older = again["installed"].get(dependency, "")
                    held_back = (
                        f"{library} does not import under {dependency} {version}, the newest release the installer "
                        f"picks ({error.splitlines()[-1]}); the page's examples ran with {dependency} {older} "
                        f"(`{dependency}{bound}`), the newest release before it."
                    )
                    return replace(installed, held_back=held_back)
            self.install([requirement, f"{dependency}=={version}"])  # back to what the installer picked
        return installed

    def _library_imports(self, library: str) -> dict[str, Any]:
        code, output, _ = self._run([self.python, "-c", LIBRARY_IMPORTS, library], 120, cwd=self.sandbox.home)
        try:
            return json.loads(output.strip().splitlines()[-1]) if code == 0 else {}
        except (ValueError, IndexError):
            return {}

    def probe(self, modules: list[str], library: str) -> dict[str, Any]:
        """Which modules import, what the library requires (with its extras) and which modules it provides."""
        payload = json.dumps({"modules": modules, "library": library})
        code, output, _ = self._run([self.python, "-c", PROBE, payload], 60, cwd=self.sandbox.home)
        try:
            return json.loads(output.strip().splitlines()[-1]) if code == 0 else {}
        except (ValueError, IndexError):
            return {}

    def provides(self, wanted: dict[str, list[str]]) -> dict[str, bool]:
        """Whether the package the index has under each requirement provides the modules expected of it
        (requirement -> modules), seen by unpacking it apart from the reader's virtualenv: False when the index
        has no such package, or one that holds other modules (somebody else's). A requirement that fails to
        unpack for another reason tells nothing: its modules are left out."""
        folder = f"{self.sandbox.home}/.looked-up"
        together = bool(wanted) and self.install(list(wanted), apart=folder).ok
        unpacked: dict[str, str] = {}  # module -> the distribution unpacked for it (normalized)
        provided: dict[str, bool] = {}
        for requirement, modules in wanted.items():
            done = None if together else self.install([requirement], apart=folder)
            if done is None or done.ok:
                unpacked.update(dict.fromkeys(modules, normalized(Requirement(requirement).name)))
            elif done.not_found:
                provided.update(dict.fromkeys(modules, False))
        if unpacked:
            payload = json.dumps({"modules": unpacked, "folder": folder})
            code, output, _ = self._run([self.python, "-c", LOOK_UP, payload], 60, cwd=self.sandbox.home)
            try:
                provided.update(json.loads(output.strip().splitlines()[-1]) if code == 0 else {})
            except (ValueError, IndexError):
                pass
        return provided

    def download(self, url: str, inside: str) -> str | None:
        """Save the file at url where the reader saves it; why it could not be, or None."""
        if self.options.offline:
            return "validation runs offline"
        status, output, timed_out = self._run(
            [self.python, "-c", DOWNLOAD, url, inside, str(DOWNLOAD_LIMIT)], DOWNLOAD_TIMEOUT, cwd=self.sandbox.work
        )
        if timed_out:
            return f"it took longer than {DOWNLOAD_TIMEOUT} s"
        if status != 0:
            return (output.strip().splitlines() or ["the download stopped"])[-1]
        return None

    def readable(self, text: str) -> str:
        """Sandbox paths mean nothing to a reader: show site-packages/... instead."""
        return re.sub(
            re.escape(f"{self.sandbox.home}/.venv/lib/") + r"python[\d.]+/site-packages/", "site-packages/", text
        )

    def close(self) -> None:
        self.sandbox.close()
