"""Keeping what untrusted commands print within bounds: the head and the tail of an output (the command and its
final error are what matter), in bounded memory however much they print."""

import os


def as_text(data: bytes) -> str:
    # NUL becomes U+FFFD: PostgreSQL text columns cannot store it.
    return data.decode("utf-8", "replace").replace("\0", "\ufffd")


def head_and_tail(head: bytes, tail: bytes, cut: int) -> str:
    return as_text(head) + f"\n[... {cut} bytes cut ...]\n" + as_text(tail)


def cap_output(data: bytes, limit: int) -> tuple[str, bool]:
    """The text of an output within the limit, and whether anything was cut."""
    if len(data) <= limit:
        return as_text(data), False
    head, tail = data[: limit // 4], data[-(limit - limit // 4) :]
    return head_and_tail(head, tail, len(data) - len(head) - len(tail)), True


def read_capped(handle: int, limit: int, offset: int = 0) -> tuple[str, bool]:
    """An open file's head and tail (from offset on) within the limit, reading no more than that (a file made
    huge, sparse or not, costs nothing)."""
    try:
        size = os.fstat(handle).st_size - offset
    except OSError:
        return "", False
    if size <= 0:
        return "", False
    if size <= limit:
        return cap_output(os.pread(handle, size, offset), limit)
    head = os.pread(handle, limit // 4, offset)
    tail_size = limit - limit // 4
    tail = os.pread(handle, tail_size, offset + size - tail_size)
    return head_and_tail(head, tail, size - len(head) - len(tail)), True


class OutputCapture:
    """The head and a rolling tail of a stream, so a flood of output costs bounded memory."""

    def __init__(self, limit: int):
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.recent = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.recent += chunk
        del self.recent[: max(0, len(self.recent) - 8192)]
        room = self.limit // 4 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > 2 * self.limit:
            del self.tail[: len(self.tail) - self.limit]

    def drop_last(self, count: int) -> None:
        """Forget the last count bytes (an end marker the shell printed)."""
        self.total -= count
        from_tail = min(count, len(self.tail))
        del self.tail[len(self.tail) - from_tail :]
        del self.head[len(self.head) - (count - from_tail) :]

    def text(self) -> tuple[str, bool]:
        if self.total <= len(self.head) + len(self.tail):
            return cap_output(bytes(self.head + self.tail), self.limit)
        tail = bytes(self.tail[-(self.limit - len(self.head)) :])
        cut = self.total - len(self.head) - len(tail)
        return head_and_tail(bytes(self.head), tail, cut), True
