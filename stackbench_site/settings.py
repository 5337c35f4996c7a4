"""Django settings. Every knob comes from the environment (see README "Configuration").

With no environment at all, Stackbench runs embedded: SQLite and Celery's filesystem broker under var/.
DATABASE_URL and CELERY_BROKER_URL switch to PostgreSQL and Redis.
"""

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url

from stackbench_site.env import BadSetting, envbool, envfloat, envint, envlist, envstr

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(envstr("STACKBENCH_VAR", str(BASE_DIR / "var"))).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)
RUNS_DIR = VAR_DIR / "runs"
SHARED_FIXTURES_DIR = BASE_DIR / "sample_data"


def _secret_key():
    """A key from the environment, or one generated once and kept in var/ for local use."""
    configured = envstr("SECRET_KEY")
    if configured:
        return configured
    key_file = VAR_DIR / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = envbool("DEBUG", False)
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "django_celery_results",
    "walkthroughs",
    "audits",
]

MIDDLEWARE = [
    "stackbench_site.middleware.ApiTrailingSlashMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "stackbench_site.middleware.RequestBodyLimitMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "stackbench_site.middleware.SecurityHeadersMiddleware",
    "stackbench_site.middleware.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "stackbench_site.urls"
WSGI_APPLICATION = "stackbench_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "stackbench_site.context_processors.severities",
                "stackbench_site.context_processors.recovery",
            ],
        },
    },
]

DATABASE_URL = envstr("DATABASE_URL", f"sqlite:///{VAR_DIR / 'stackbench.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL and IMMEDIATE transactions let the web app and the worker write the same file without
    # "database is locked" errors.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
elif DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # The pages' correlated counts look expensive to the planner, so PostgreSQL would JIT-compile them: tens of
    # milliseconds of compiling for a query that runs in two.
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c jit=off"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = envstr("TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# Uploads: a walkthrough export or a results file is small; a folder of them is a few dozen files.
DATA_UPLOAD_MAX_MEMORY_SIZE = envint("STACKBENCH_UPLOAD_MAX_BYTES", 10 * 1024 * 1024)
FILE_UPLOAD_MAX_MEMORY_SIZE = DATA_UPLOAD_MAX_MEMORY_SIZE
STACKBENCH_UPLOAD_MAX_BYTES = DATA_UPLOAD_MAX_MEMORY_SIZE
# Django stops parsing at this count, so an oversized upload is never read into memory (errors.bad_request).
DATA_UPLOAD_MAX_NUMBER_FILES = envint("STACKBENCH_UPLOAD_MAX_FILES", 50)
# The largest request body accepted at all (an upload of several files), refused by its declared length before
# any of it is read.
STACKBENCH_REQUEST_MAX_BYTES = envint("STACKBENCH_REQUEST_MAX_BYTES", 50 * 1024 * 1024)

# Celery. The embedded default is the filesystem broker: it crosses processes and needs no server.
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = envstr("CELERY_BROKER_URL", "filesystem://localhost//")
if CELERY_BROKER_URL.startswith("filesystem://"):
    for folder in ("data", "control"):
        (BROKER_DIR / folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "data"),
        "data_folder_out": str(BROKER_DIR / "data"),
        "control_folder": str(BROKER_DIR / "control"),
    }
    # This transport has no event loop, so a prefork worker falls back to billiard's threaded pool, whose children
    # share one lock on one job pipe: a child killed while it waits for work dies holding it, and the worker takes
    # no task again. Threads share no such lock (runs spend their time in sandboxed subprocesses anyway).
    CELERY_WORKER_POOL = "threads"
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_RESULT_BACKEND = "django-db"
CELERY_RESULT_EXTENDED = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False

# Presented (Symposium) walkthroughs may show files of repositories under these folders, and of every
# library's docs repository.
STACKBENCH_REPO_ROOTS = envlist("STACKBENCH_REPO_ROOTS", [str(VAR_DIR / "repos")])
# Where the worker keeps its clones of docs repositories given by git URL.
STACKBENCH_CHECKOUTS_DIR = Path(envstr("STACKBENCH_CHECKOUTS_DIR") or VAR_DIR / "checkouts")
# A repository people may name (docs, presented walkthroughs) lies under one of these roots; no root may hold the
# app or its var/ folder, or a comment could show the secret key.
for _root in STACKBENCH_REPO_ROOTS:
    _resolved = Path(_root).resolve()
    if BASE_DIR.resolve().is_relative_to(_resolved) or VAR_DIR.is_relative_to(_resolved):
        raise BadSetting(
            f"STACKBENCH_REPO_ROOTS includes {_root}, which holds Stackbench's own folder or its var/: "
            "name folders of docs repositories only"
        )
STACKBENCH_BASE_URL = envstr("STACKBENCH_BASE_URL", "http://127.0.0.1:8000")

# Runs: a worker reports every second while it runs one; silent this long, it is taken for dead and the run is
# queued again once (then failed). The check runs every minute (celery beat) and when a worker starts.
STACKBENCH_RUN_STALE_SECONDS = envint("STACKBENCH_RUN_STALE_SECONDS", 120)
# The dashboard warns when the periodic recovery (the --beat worker) has not run for this long.
STACKBENCH_RECOVERY_ALERT_SECONDS = envint("STACKBENCH_RECOVERY_ALERT_SECONDS", 600)
# A run queued this long without a worker taking it has its message sent again (it may have been lost).
STACKBENCH_QUEUED_STALE_SECONDS = envint("STACKBENCH_QUEUED_STALE_SECONDS", 300)
# A run whose database stops answering (a restart) waits this long for it, then is queued again as the same
# attempt: our infrastructure's failure is not the run's.
STACKBENCH_DATABASE_WAIT_SECONDS = envint("STACKBENCH_DATABASE_WAIT_SECONDS", 600)
CELERY_BEAT_SCHEDULE = {
    "recover-stale-runs": {"task": "audits.tasks.recover_stale_runs_task", "schedule": 60.0},
}

# Commands taken from docs (audits), code examples (validations) and the Claude agent's tools are untrusted: each
# run gets a sandbox (bubblewrap + slirp4netns, see stackbench/sandbox/sandbox.py) under these limits. What of the
# worker's environment commands see: proxies, locale, certificates, and pip/uv options that are not secrets.
STACKBENCH_COMMAND_TIMEOUT = envfloat("STACKBENCH_COMMAND_TIMEOUT", 120.0)
STACKBENCH_OUTPUT_CAP_BYTES = envint("STACKBENCH_OUTPUT_CAP_BYTES", 200_000)
STACKBENCH_SANDBOX_MEMORY_MB = envint("STACKBENCH_SANDBOX_MEMORY_MB", 2048)
STACKBENCH_SANDBOX_FILE_MB = envint("STACKBENCH_SANDBOX_FILE_MB", 1024)
STACKBENCH_SANDBOX_MAX_PROCESSES = envint("STACKBENCH_SANDBOX_MAX_PROCESSES", 256)
STACKBENCH_SANDBOX_DISK_MB = envint("STACKBENCH_SANDBOX_DISK_MB", 4096)
STACKBENCH_SANDBOX_MAX_FILES = envint("STACKBENCH_SANDBOX_MAX_FILES", 500_000)
# CPU time per run, in CPUs' worth (default half the machine's, at least one): the dashboard keeps the rest.
STACKBENCH_SANDBOX_CPUS = envfloat("STACKBENCH_SANDBOX_CPUS", max(1.0, (os.cpu_count() or 2) / 2))
# Where sandbox folders are made (default: the system's temp folder).
STACKBENCH_SANDBOX_DIR = envstr("STACKBENCH_SANDBOX_DIR") or None
# The weaker jail without namespaces, for machines where bubblewrap cannot run; every such run says so.
STACKBENCH_UNCONFINED = envbool("STACKBENCH_UNCONFINED", False)
# A reader's network: "registries" (the internet, without the host or private networks) or "none".
STACKBENCH_SANDBOX_NETWORK = envstr("STACKBENCH_SANDBOX_NETWORK", "registries")
if STACKBENCH_SANDBOX_NETWORK not in ("registries", "none"):
    raise BadSetting(f"STACKBENCH_SANDBOX_NETWORK={STACKBENCH_SANDBOX_NETWORK!r} is not registries or none")
# Package registries stay reachable even where they resolve to a private address (a mirror, a proxy): there, on
# their own port only ("host:port"; a bare host means 443 and 80), never the address's other services.
STACKBENCH_REGISTRIES = envlist(
    "STACKBENCH_REGISTRIES", ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "registry.yarnpkg.com"]
) + [
    f"{parts.hostname}:{parts.port or (80 if parts.scheme == 'http' else 443)}"
    for url in (envstr("PIP_INDEX_URL"), envstr("UV_INDEX_URL"), envstr("NPM_CONFIG_REGISTRY"))
    if url and (parts := urlsplit(url)).hostname
]
# Interpreters a reader's virtualenv can be made from (default: those in /usr/bin, /usr/local/bin, /opt/python*).
STACKBENCH_PYTHONS = envlist("STACKBENCH_PYTHONS")
_PASSED_TO_SANDBOX = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "CURL_CA_BUNDLE",
    "GIT_SSL_CAINFO",
)
_SECRET_MARKERS = ("SECRET", "TOKEN", "PASSWORD", "API_KEY", "CREDENTIAL", "AUTH")
STACKBENCH_SANDBOX_ENVIRONMENT = {
    name: value
    for name, value in os.environ.items()
    if name in _PASSED_TO_SANDBOX
    or (
        name.startswith(("PIP_", "UV_"))
        and not any(marker in name for marker in _SECRET_MARKERS)
        and name not in ("UV_CACHE_DIR", "PIP_CACHE_DIR")
    )
}
# The worker's own home: never visible to a sandbox (nor the app's folder, nor var/).
STACKBENCH_WORKER_HOME = str(Path.home())

# Validation: wheel folders to install from, and whether to install only from them (offline).
STACKBENCH_FIND_LINKS = envlist("STACKBENCH_FIND_LINKS")
STACKBENCH_NO_INDEX = envbool("STACKBENCH_NO_INDEX", False)

# The Claude agent (auditor and generator): offered when a credential is configured. The CLI sees only these
# variables of the worker's environment, plus its credential.
STACKBENCH_CLAUDE_MODEL = envstr("STACKBENCH_CLAUDE_MODEL") or None
STACKBENCH_CLAUDE_MAX_TURNS = envint("STACKBENCH_CLAUDE_MAX_TURNS", 200)
STACKBENCH_CLAUDE_MAX_BUDGET_USD = envfloat("STACKBENCH_CLAUDE_MAX_BUDGET_USD", 5.0)
STACKBENCH_CLAUDE_TIMEOUT = envfloat("STACKBENCH_CLAUDE_TIMEOUT", 1800.0)
STACKBENCH_CLAUDE_MAX_RETRIES = envint("STACKBENCH_CLAUDE_MAX_RETRIES", 4)
STACKBENCH_CLAUDE_CLI = envstr("STACKBENCH_CLAUDE_CLI") or None
_CLAUDE_CREDENTIALS = (
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
)
STACKBENCH_CLAUDE_CREDENTIALS = {name: os.environ[name] for name in _CLAUDE_CREDENTIALS if os.environ.get(name)}
_PASSED_TO_CLAUDE = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "TERM",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ANTHROPIC_BASE_URL",
    "AWS_REGION",
    "AWS_PROFILE",
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
)
STACKBENCH_CLAUDE_ENVIRONMENT = {name: os.environ[name] for name in _PASSED_TO_CLAUDE if name in os.environ}

# The command line: `stackbench up` (address, worker processes, web processes) and `stackbench gate` (a remote
# dashboard and its API token).
STACKBENCH_HOST = envstr("STACKBENCH_HOST", "127.0.0.1")
STACKBENCH_PORT = envint("STACKBENCH_PORT", 8000)
STACKBENCH_WORKERS = envint("STACKBENCH_WORKERS", 2)
STACKBENCH_WEB_PROCESSES = envint("STACKBENCH_WEB_PROCESSES", (os.cpu_count() or 1) + 1)
STACKBENCH_URL = envstr("STACKBENCH_URL")
STACKBENCH_TOKEN = envstr("STACKBENCH_TOKEN")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "WARNING")},
}
