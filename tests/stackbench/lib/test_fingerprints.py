import pytest

from stackbench.lib.fingerprints import FINGERPRINT_VERSION, example_fingerprint, gap_fingerprint, normalize_text
from stackbench.lib.output_compare import compare


def test_volatile_details_are_removed():
    assert (
        normalize_text("Failed at /tmp/abc/x.py line 12, 0x7ffe 2026-01-01T10:00:00Z took 3.2 s")
        == "failed at <tmp> line <n>, <addr> <time> took <duration>"
    )


def test_a_gap_keeps_its_identity_across_reruns_and_small_edits():
    first = gap_fingerprint(
        "toolz", "wt_a", "Load the data", "logical_flow", "`seed.csv` missing (exit 1 after 0.10 s)"
    )
    rerun = gap_fingerprint(
        "toolz", "wt_a", "Load  the data ", "logical_flow", "`seed.csv` missing (exit 1 after 0.31 s)"
    )
    assert first == rerun


def test_what_identifies_a_gap_changes_its_fingerprint():
    base = ("toolz", "wt_a", "Load the data", "logical_flow", "`seed.csv` missing")
    assert gap_fingerprint(*base) != gap_fingerprint("toolz", "wt_b", *base[2:])
    assert gap_fingerprint(*base) != gap_fingerprint("toolz", "wt_a", "Load the data", "clarity", base[4])
    assert gap_fingerprint(*base) != gap_fingerprint(
        "toolz", "wt_a", "Load the data", "logical_flow", "`other.csv` missing"
    )


def test_an_example_is_identified_by_its_code_not_its_line():
    one = example_fingerprint(
        "toolz", "intro.md", "from toolz import pipee\n", "ImportError: cannot import name 'pipee'"
    )
    moved = example_fingerprint(
        "toolz", "intro.md", "from toolz import  pipee", "ImportError: cannot import name 'pipee'"
    )
    other = example_fingerprint(
        "toolz", "intro.md", "from toolz import pipe2", "ImportError: cannot import name 'pipe2'"
    )
    assert one == moved and one != other


def test_fingerprints_stay_those_stored_problems_were_matched_by():
    assert (
        normalize_text(
            "2024-05-06 07:08:09,123 at 0x1f in /tmp/abc/x.py, see https://x.dev/a; id deadbeef12345 took 3 ms"
        )
        == "<time> at <addr> in <tmp>, see <url> id <id> took <duration>"
    )
    assert (
        gap_fingerprint(
            "toolz",
            "wt_a",
            "Run the server at 2024-05-06 07:08:09,123",
            "logical_flow",
            "Exit 1 after 0.3 s at 0x1f in /tmp/abc/x.py, see https://x.dev/a; id deadbeef12345",
        )
        == "fa0e26170d582a3dbdfaa15ec91aec54"
    )


def test_the_rules_are_versioned():
    assert FINGERPRINT_VERSION == 2


# One run and the next of the same failing example: each pair differs only in a value no two runs share.
RERUNS = [
    ("made 2024-05-06 07:08:09,123", "made 2026-01-02 03:04:05,999"),
    ("on Mon Jan  1 10:00:00 2024", "on Tue Mar  4 11:22:33 2026"),
    ("<Foo object at 0x7f3a2b1c0d90>", "<Foo object at 0x7e0011223344>"),
    ("request 1b4e28ba-2fa1-11d2-883f-0016d3cca427", "request 6fa459ea-ee8a-3ca4-894e-db77e160355e"),
    ("token 5f1c2d3e4b5a6978", "token 0a9b8c7d6e5f4a3b"),
    ("took 3.2 s", "took 41ms"),
    ("wrote /tmp/tmpab12cd/out.txt", "wrote /tmp/tmpzz99yy/out.txt"),
]


@pytest.mark.parametrize("first, rerun", RERUNS)
def test_what_output_comparison_calls_format_never_changes_a_findings_identity(first, rerun):
    assert compare(first, rerun) == "format"
    assert example_fingerprint("toolz", "a.md", "x", f"ValueError: {first}") == example_fingerprint(
        "toolz", "a.md", "x", f"ValueError: {rerun}"
    )


def test_terminal_codes_are_no_part_of_a_findings_identity():
    assert normalize_text("\x1b[1mboom\x1b[0m") == normalize_text("[1mboom[0m") == "boom"
