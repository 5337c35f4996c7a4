"""The engines stand alone: every module of the stackbench package imports in a fresh interpreter with no Django
settings, and brings in neither Django nor Celery."""

import os
import pkgutil
import subprocess
import sys

from tests.builders import BASE_DIR

ENGINE_PACKAGES = ["stackbench"]


def engine_modules() -> list[str]:
    names = []
    for package in ENGINE_PACKAGES:
        folder = BASE_DIR.joinpath(*package.split("."))
        names += [info.name for info in pkgutil.walk_packages([str(folder)], prefix=package + ".")]
    return sorted(names)


def test_there_are_engine_modules_to_check():
    modules = engine_modules()
    assert "stackbench.validation.page_validation" in modules and "stackbench.auditing.step_server" in modules
    assert "stackbench.auditing.rules" in modules and "stackbench.lib.markdown" in modules


def test_every_engine_module_imports_without_django_configured():
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO")}
    check = (
        "import importlib, sys\n"
        f"for name in {engine_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & {'django', 'celery', 'kombu', 'ninja'})\n"
        "assert not loaded, f'engines loaded {loaded}'\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", check], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
