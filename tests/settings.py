"""Settings for the test suite: the project's settings with var/ moved aside so tests never touch a running
instance, and a SQLite test database on disk so worker processes started by tests can share it."""

import getpass
import os
import tempfile
from pathlib import Path

os.environ.setdefault("STACKBENCH_VAR", str(Path(__file__).resolve().parent.parent / "var" / "test"))

from stackbench_site.settings import *  # noqa: F403
from stackbench_site.settings import DATABASES, STACKBENCH_REPO_ROOTS, VAR_DIR

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_db.sqlite3")}

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Tests make their docs repositories in pytest's temporary folders.
STACKBENCH_REPO_ROOTS = [*STACKBENCH_REPO_ROOTS, str(Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}")]
