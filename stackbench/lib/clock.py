"""The one clock: timezone-aware UTC, as every file format and model stores it."""

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)
