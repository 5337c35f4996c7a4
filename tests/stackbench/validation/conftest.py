import subprocess
import sys
from importlib import metadata

import pytest

from stackbench_site.configuration import validation_options


@pytest.fixture
def offline(wheelhouse):
    return validation_options(timeout=10, find_links=[wheelhouse], offline=True, num_workers=1)


@pytest.fixture(scope="session")
def wheels_of_pytest(tmp_path_factory):
    """Wheels of pytest and what it needs, at the versions we run, for pages whose tests their readers run."""
    folder = tmp_path_factory.mktemp("wheels_of_pytest")
    wanted = [
        f"{name}=={metadata.version(name)}" for name in ("pytest", "iniconfig", "packaging", "pluggy", "pygments")
    ]
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
    done = subprocess.run([*command, "-d", str(folder), *wanted], capture_output=True, timeout=300)
    # Never a skip: the tests of pages that show tests would then prove nothing.
    assert done.returncode == 0, f"pytest's wheels could not be downloaded: {done.stderr.decode()[-800:]}"
    return folder


@pytest.fixture
def offline_with_pytest(wheelhouse, wheels_of_pytest):
    return validation_options(timeout=20, find_links=[wheelhouse, wheels_of_pytest], offline=True, num_workers=1)
