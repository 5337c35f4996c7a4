"""Which distribution on PyPI provides an importable module: the well-known cases where the two names differ, kept
here once for the extractor (an example's `dependencies`) and the validator (what to install for it); and whether a
page's prose names a package, which is what tells its reader to install it."""

import re
import sys
import tomllib
from collections.abc import Iterable
from pathlib import PurePosixPath

# Import name (or dotted prefix) -> distribution, where they differ. Dotted prefixes cover namespace packages,
# whose top-level name (azure, google) is no distribution at all.
DISTRIBUTION_OF_MODULE = {
    "yaml": "PyYAML",
    "PIL": "Pillow",
    "sklearn": "scikit-learn",
    "cv2": "opencv-python",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "jwt": "PyJWT",
    "attr": "attrs",
    "git": "GitPython",
    "magic": "python-magic",
    "docx": "python-docx",
    "serial": "pyserial",
    "Crypto": "pycryptodome",
    "skimage": "scikit-image",
    "zmq": "pyzmq",
    "pythonjsonlogger": "python-json-logger",
    "opentelemetry": "opentelemetry-api",
    "opentelemetry.sdk": "opentelemetry-sdk",
    "google.protobuf": "protobuf",
    "google.cloud.secretmanager": "google-cloud-secret-manager",
    "google.cloud.storage": "google-cloud-storage",
    "google.auth": "google-auth",
    "azure.identity": "azure-identity",
    "azure.keyvault.secrets": "azure-keyvault-secrets",
    "azure.storage.blob": "azure-storage-blob",
    "azure.core": "azure-core",
    "boto3": "boto3",
    "botocore": "botocore",
    "mypy_boto3_secretsmanager": "mypy-boto3-secretsmanager",
    "tomli_w": "tomli-w",
    "multipart": "python-multipart",
    "socks": "PySocks",
    "OpenSSL": "pyOpenSSL",
    "nacl": "PyNaCl",
    "usb": "pyusb",
    "win32api": "pywin32",
    "MySQLdb": "mysqlclient",
    "psycopg2": "psycopg2-binary",
    "fitz": "PyMuPDF",
    "Levenshtein": "python-Levenshtein",
    "slugify": "python-slugify",
    "jose": "python-jose",
    "ldap": "python-ldap",
    "lxml": "lxml",
    "markdown": "Markdown",
    "mdit_py_plugins": "mdit-py-plugins",
    "markdown_it": "markdown-it-py",
    "pkg_resources": "setuptools",
    "typing_extensions": "typing-extensions",
}
# Top-level names that are namespaces shared by many distributions: never a distribution by themselves.
NAMESPACES = {"azure", "google", "opentelemetry.instrumentation", "zope", "jaraco", "sphinxcontrib"}
# Names docs give the reader's own code (mylib, your_app, settings, models): never looked up on an index, where a
# squatter may well have taken them.
READERS_OWN = re.compile(
    r"^(?:(?:my|your|some|other|example|sample|demo)_?(?:app|application|lib|library|module|mod|package|pkg|project|code|"
    r"service|settings|config|models?|utils?|stuff|things?|api|plugin|program|script|tasks?)?\d*|foo|bar|baz|qux|"
    r"app|application|project|package|module|lib|library|utils?|helpers?|models?|views?|schemas?|settings|config|"
    r"conf|main|tasks?|services?|api|core|common|server|client|db|database|routes|handlers?|"
    # The layers a layered (clean, hexagonal) application is split into: the reader's own packages.
    r"domain|entities|infrastructure|adapters|repositories|use_?cases|"
    # `from somewhere import my_func`: wherever the reader keeps the function, a place the page does not name.
    r"somewhere|elsewhere|wherever|anywhere|"
    # my_awesome_app, your_project_name, yourcompany: a name the reader is to put their own in place of.
    r"(?:my|your|our)_\w+|your\w+|"
    # pkg1, package_b, module2, mod_a: one of several made-up packages a page tells apart by number or letter.
    r"(?:pkg|package|mod|module|lib|library|app|project)(?:_?\d+|_[a-z]))$",
    re.IGNORECASE,
)


# The names a project gives its own test suite: a folder of its repository, never installed with it (and never a
# package to look up on an index, where a squatter may well have taken the name).
TEST_SUITES = {"tests", "test"}


def in_test_suite(module: str) -> bool:
    """The module is in a project's test suite (tests.machines, test.helpers)."""
    return module.split(".")[0] in TEST_SUITES


def distribution_for(module: str) -> str | None:
    """The distribution that provides module (dotted), by the table above or by the usual convention (its
    top-level name); None for the standard library, relative or private names and bare namespaces."""
    top = module.split(".")[0]
    if not module or top in sys.stdlib_module_names or top == "__future__" or top.startswith("_"):
        return None
    parts = module.split(".")
    for length in range(len(parts), 0, -1):
        prefix = ".".join(parts[:length])
        if prefix in DISTRIBUTION_OF_MODULE:
            return DISTRIBUTION_OF_MODULE[prefix]
    if top in NAMESPACES or readers_own(top) or in_test_suite(top):
        return None
    return top.replace("_", "-")


def readers_own(module: str) -> bool:
    """The module stands for the reader's own code (my_package, your_app.models): no index has it for them."""
    return bool(READERS_OWN.match(module.split(".")[0]))


def any_module(module: str) -> bool:
    """An imported module named by a letter (`import a`, `from b import c`), or by the word for one (`from mod
    import func`, `import package`), stands for any module, as an import sorter's or a linter's samples use them.
    (A quoted letter elsewhere is more often a field's name.)"""
    return bool(re.fullmatch(r"[a-z]\d?|mod|module|modname|pkg|package", module.split(".")[0]))


def normalized(name: str) -> str:
    """PEP 503's normal form of a distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def module_names_of(library: str) -> set[str]:
    """Import names a distribution is likely to be imported under (python-dateutil -> dateutil, PyYAML -> yaml)."""
    base = library.lower().replace("-", "_").replace(".", "_")
    names = {base, base.removeprefix("python_"), base.removesuffix("_python"), base.removeprefix("py")}
    names |= {
        module.split(".")[0].lower()
        for module, package in DISTRIBUTION_OF_MODULE.items()
        if normalized(package) == normalized(library)
    }
    return {n for n in names if n}


def laid_out_modules(paths: Iterable[str]) -> set[str]:
    """The modules and packages a page lays out as files (`app.py`, `src/myproject/__init__.py`): every part of
    their paths, as a module is imported from any folder of a layout. They are the reader's own, never a package
    to look up on an index, where one of that name may well exist."""
    python_paths = [PurePosixPath(path) for path in paths if path.endswith(".py")]
    return {part.removesuffix(".py") for path in python_paths for part in path.parts}


def entry_point_modules(files: Iterable[tuple[str, str]]) -> set[str]:
    """The top-level modules the entry points of a pyproject.toml the page shows point to (`[project.scripts]
    cli = "pkg.cli:main"`, gui-scripts, entry-points groups), from (path, content) pairs: the package of the
    reader's own project, which that file describes, never one to look up on an index."""
    modules: set[str] = set()
    for path, content in files:
        if PurePosixPath(path).name != "pyproject.toml":
            continue
        try:
            project = tomllib.loads(content).get("project", {})
        except tomllib.TOMLDecodeError:
            continue
        groups = [project.get("scripts", {}), project.get("gui-scripts", {}), *project.get("entry-points", {}).values()]
        references = [value for group in groups if isinstance(group, dict) for value in group.values()]
        modules |= {
            ref.split(":")[0].split(".")[0].strip() for ref in references if isinstance(ref, str) and ":" in ref
        }
    return modules - {""}


# A word of prose as a package may be written in it: dirty-equals, sqlalchemy_utils, azure.identity, lib[extra,other].
PROSE_WORD = re.compile(r"[A-Za-z0-9](?:[\w.-]*\w)?(?:\[[\w.,\s-]+\])?")


def prose_names(prose: str) -> set[str]:
    """The words of a page's prose (its text outside code blocks) that could name a package, lowercased: each
    whole word, a dotted one by its leading parts too (`httpx.AsyncClient` names httpx), and `lib[a,b]` as lib,
    lib[a] and lib[b]."""
    names: set[str] = set()
    for word in PROSE_WORD.findall(prose):
        word = word.lower()
        base, _, extras = word.partition("[")
        parts = base.split(".")
        names.update(".".join(parts[:length]) for length in range(1, len(parts) + 1))
        names.update(f"{base}[{extra.strip()}]" for extra in extras.rstrip("]").split(",") if extra.strip())
    return names


def names_package(names: set[str], module: str, distribution: str) -> bool:
    """The words name the distribution or the module it provides, whole and in any case (a namespace package's
    module by its full name: `azure` names no package)."""
    top = module.split(".")[0]
    wanted = {normalized(distribution), normalized(module if top in NAMESPACES else top)}
    return any(normalized(name) in wanted for name in names)


def names_extra(names: set[str], library: str, extra: str) -> bool:
    """The words name the library's extra as the reader installs it (`lib[extra]`): an extra's own name is often
    an everyday word (full, all, standard) that tells nothing by itself. An extra named with several words
    (`cloud-key-store`) is named by prose that uses every one of them (a section headed "Cloud Key Store")."""
    words = normalized(extra).split("-")
    return f"{normalized(library)}[{normalized(extra)}]" in {
        _normalized_extra(name) for name in names if "[" in name
    } or (len(words) > 1 and all(word in names for word in words))


def _normalized_extra(name: str) -> str:
    base, _, extra = name.partition("[")
    return f"{normalized(base)}[{normalized(extra.rstrip(']'))}]"


# A sentence saying a package must be installed: "requires [pydantic](https://…) to be installed", "`redis` must
# be installed". The package may be linked or quoted.
_PACKAGE = r"(?P<{0}_open>[\[`'\"]?)(?P<{0}>[A-Za-z][\w.-]*(?:\[[\w,-]+\])?)[\]`'\"]?(?:\([^)\s]*\))?"
REQUIRED_INSTALLED = re.compile(
    r"\b(?:requires?|needs?)\s+(?:the\s+)?" + _PACKAGE.format("needed") + r"(?:\s+(?:package|library|module))?"
    r"\s+to\s+be\s+installed\b|" + _PACKAGE.format("must") + r"(?:\s+(?:package|library|module))?"
    r"\s+(?:must|needs\s+to|has\s+to|should)\s+be\s+installed\b",
    re.IGNORECASE,
)


def required_installed(text: str, marked: bool = False) -> list[str]:
    """The packages text says must be installed (a feature's prerequisite, a library's ImportError), in order;
    marked: only those linked or quoted, as prose sets a package apart from its words ("requires it to be
    installed")."""
    found = []
    for match in REQUIRED_INSTALLED.finditer(text):
        key = "needed" if match.group("needed") else "must"
        if not marked or match.group(f"{key}_open"):
            found.append(match.group(key))
    return [name for name in dict.fromkeys(found) if name.lower() != "python"]
