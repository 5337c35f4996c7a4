"""What the worker's machine can offer a reader: the Python interpreters an unprivileged user can run (a reader's
virtualenv is made from one), and Node. A run's profile is chosen among these."""

import functools
import glob
import subprocess
from pathlib import Path

from stackbench.sandbox.host_view import reachable_by_anyone
from stackbench.sandbox.prerequisites import tool
from stackbench.sandbox.settings import Profile

PYTHON_PLACES = ("/usr/bin/python3.[0-9]*", "/usr/local/bin/python3.[0-9]*", "/opt/python*/bin/python3.[0-9]*")


@functools.cache
def version_of(command: tuple[str, ...]) -> str:
    try:
        done = subprocess.run(list(command), capture_output=True, text=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip().lstrip("v") if done.returncode == 0 else ""


def pythons(candidates: list[str] | None = None) -> dict[str, str]:
    """Version -> interpreter, for the Pythons a sandbox's user can run (named candidates, or the usual places)."""
    paths = candidates or sorted(
        p
        for pattern in PYTHON_PLACES
        for p in glob.glob(pattern)
        if p.rsplit("/", 1)[-1].replace("python", "").replace(".", "").isdigit()
    )
    found: dict[str, str] = {}
    for path in paths:
        if not reachable_by_anyone(Path(path), execute=True):
            continue
        version = version_of((path, "-c", "import platform; print(platform.python_version())"))
        if version and version not in found:
            found[version] = path
    return dict(sorted(found.items(), key=lambda item: [int(part) for part in item[0].split(".") if part.isdigit()]))


def node() -> tuple[str | None, str]:
    """Where node is and its version (None, "" without one)."""
    path = tool("node")
    if path == "node" or not reachable_by_anyone(Path(path), execute=True):
        return None, ""
    return path, version_of((path, "--version"))


def profile_for(wanted_python: str, network: str, candidates: list[str] | None = None) -> Profile:
    """The profile a run gets: the newest Python matching wanted_python ("3.11", "3.11.2"; empty: the newest
    there is), the machine's Node, and the network."""
    return profiles_for(wanted_python, network, candidates)[0]


def profiles_for(wanted_python: str, network: str, candidates: list[str] | None = None) -> list[Profile]:
    """Every profile matching wanted_python, newest Python first: a library that cannot be installed on one
    (its Requires-Python) is tried on the next."""
    available = pythons(candidates)
    if not available:
        raise LookupError(
            "no Python interpreter an unprivileged user can run was found (looked in "
            f"{', '.join(PYTHON_PLACES)}); install one (Debian: python3) or name one in STACKBENCH_PYTHONS"
        )
    matching = [v for v in available if not wanted_python or v == wanted_python or v.startswith(wanted_python + ".")]
    if not matching:
        raise LookupError(f"Python {wanted_python} is not on this worker; it has {', '.join(available)}")
    node_path, node_version = node()
    return [
        Profile(
            python=available[version],
            python_version=version,
            node=node_path,
            node_version=node_version,
            network=network,
        )
        for version in reversed(matching)
    ]
