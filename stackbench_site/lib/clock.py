"""The one clock: timezone-aware UTC, as every file format and model stores it."""
from datetime import datetime, timezone


def utcnow() -> datetime:
    return datetime.now(timezone.utc)
