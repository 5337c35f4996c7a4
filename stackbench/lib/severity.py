"""Severity scales: an ordered vocabulary, most severe first, each name with one rank (the most severe has the
highest). Each kind of finding defines its scale once, beside its file format (gaps: critical/warning/info;
examples: error/warning/info); models, reports, the API and templates use that scale, never a copy of it.
Ranks of different scales line up position by position, so findings of both kinds sort together."""

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class SeverityScale:
    names: tuple[str, ...]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def rank(self, name: str | None) -> int:
        """3, 2, 1 for a three-level scale, most severe first; 0 for a name not on the scale."""
        return len(self.names) - self.names.index(name) if name in self.names else 0

    def name_of(self, rank: int) -> str | None:
        position = len(self.names) - rank
        return self.names[position] if 0 <= position < len(self.names) else None
