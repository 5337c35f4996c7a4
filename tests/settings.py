"""Settings for the test suite: the project's settings with var/ moved aside so tests never touch a running
instance, and a SQLite test database on disk so worker processes started by tests can share it."""

import os
from pathlib import Path

os.environ.setdefault("STACKBENCH_VAR", str(Path(__file__).resolve().parent.parent / "var" / "test"))

from stackbench_site.settings import *  # noqa: F403
from stackbench_site.settings import DATABASES, VAR_DIR

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_db.sqlite3")}

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
