"""Typed readers for environment variables that fail loudly on bad values."""

import os


class BadSetting(ValueError):
    pass


def envstr(name, default=""):
    return os.environ.get(name, default)


def envbool(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise BadSetting(f"{name}={raw!r} is not a boolean (use true/false, 1/0, yes/no, on/off)")


def envint(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise BadSetting(f"{name}={raw!r} is not an integer") from None


def envfloat(name, default):
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise BadSetting(f"{name}={raw!r} is not a number") from None


def envlist(name, default=()):
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]
