import json

import pytest

from stackbench.lib.jsonfiles import FormatError, parse_json_text


def test_an_escaped_nul_reads_as_a_replacement_character():
    assert parse_json_text(b'{"out\\u0000": "a\\u0000b"}', "r.json") == {"out\ufffd": "a\ufffdb"}


def test_a_literal_backslash_before_u0000_is_kept_as_text():
    text = json.dumps({"path": "C:\\u0000", "both": "\\\u0000"})
    assert parse_json_text(text, "r.json") == {"path": "C:\\u0000", "both": "\\\ufffd"}


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"\xff\xfe{", "not UTF-8 text"),
        (b"{", "not valid JSON"),
        (b"[" * 100_000, "JSON nested too deeply"),
    ],
)
def test_unreadable_json_is_a_format_error_naming_the_file(raw, message):
    with pytest.raises(FormatError, match=f"r.json: {message}"):
        parse_json_text(raw, "r.json")
