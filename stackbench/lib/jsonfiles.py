"""Reading and writing the JSON files every format shares: size-capped loads, validation errors that name
the file and the field, and atomic writes (temp file + fsync + rename) so nothing is ever half-written."""

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

MAX_FILE_BYTES = 50 * 1024 * 1024

Model = TypeVar("Model", bound=BaseModel)


class FormatError(ValueError):
    """A file that is not valid JSON or does not match its format; the message names file and field."""


def describe_validation_error(error: ValidationError, limit: int = 5) -> str:
    parts = []
    for item in error.errors()[:limit]:
        # A tagged union repeats its tag in the path (comment.comment.location); say it once.
        steps = [str(p) for i, p in enumerate(item["loc"]) if i == 0 or p != item["loc"][i - 1]]
        where = ".".join(steps) or "(top level)"
        parts.append(f"{where}: {item['msg']}")
    more = len(error.errors()) - limit
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


# PostgreSQL text cannot hold NUL, and captured command output may contain it: an escaped NUL reads as U+FFFD.
# A \u0000 preceded by an even run of backslashes is an escape; after an odd run it is literal text.
_ESCAPED_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


def parse_json_text(text: str | bytes, source: str) -> Any:
    try:
        if isinstance(text, bytes):
            text = text.decode(json.detect_encoding(text), "surrogatepass")
        return json.loads(_ESCAPED_NUL.sub(r"\1\\ufffd", text))
    except UnicodeDecodeError:
        raise FormatError(f"{source}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise FormatError(f"{source}: JSON nested too deeply") from None


def load_json_file(path: Path, max_bytes: int = MAX_FILE_BYTES) -> Any:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise FormatError(f"{path}: {size} bytes is over the {max_bytes} byte limit for a Stackbench file")
        raw = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read ({exc.strerror})") from None
    return parse_json_text(raw, str(path))


def parse_model(model: type[Model], data: Any, source: str) -> Model:
    """Validate data against a format, raising FormatError that names the source and the field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise FormatError(f"{source}: {describe_validation_error(exc)}") from None
    except RecursionError:
        raise FormatError(f"{source}: nested too deeply") from None


def load_model(model: type[Model], path: Path) -> Model:
    return parse_model(model, load_json_file(path), str(path))


def write_text_atomically(path: Path, payload: str) -> None:
    """Write to a temp file in the same folder, fsync, then rename, so a reader never sees half a file."""
    path = Path(path)
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def write_model(path: Path, model: BaseModel) -> None:
    """Validate on the way out too: a model that no longer matches its own schema is never written."""
    payload = model.model_dump_json(indent=2)
    type(model).model_validate_json(payload)
    write_text_atomically(path, payload)
