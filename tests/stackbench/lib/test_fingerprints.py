from stackbench.lib.fingerprints import FINGERPRINT_VERSION, example_fingerprint, gap_fingerprint, normalize_text


def test_volatile_details_are_removed():
    assert (
        normalize_text("Failed at /tmp/abc/x.py line 12, 0x7ffe 2026-01-01T10:00:00Z took 3.2 s")
        == "failed at <path> line <n>, <addr> <time> took <n> s"
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
        == "<time>,<n> at <addr> in <path>, see <url> id <id> took <n> ms"
    )
    assert (
        gap_fingerprint(
            "toolz",
            "wt_a",
            "Run the server at 2024-05-06 07:08:09,123",
            "logical_flow",
            "Exit 1 after 0.3 s at 0x1f in /tmp/abc/x.py, see https://x.dev/a; id deadbeef12345",
        )
        == "5c84ec04c166984af6f93a1eb5f93383"
    )


def test_the_rules_are_versioned():
    assert FINGERPRINT_VERSION == 1


def test_terminal_codes_are_no_part_of_a_findings_identity():
    assert normalize_text("\x1b[1mboom\x1b[0m") == normalize_text("[1mboom[0m") == "boom"
