"""What untrusted commands print, kept within bounds: head and tail, in bounded memory, reading no more."""

from stackbench.sandbox.capture import OutputCapture, cap_output, read_capped


def test_output_is_capped_keeping_the_end():
    text, cut = cap_output(b"a" * 1000 + b"THE END", 100)
    assert cut and text.endswith("THE END") and "bytes cut" in text
    assert cap_output(b"short", 100) == ("short", False)
    assert cap_output(b"a\0b", 100) == ("a\ufffdb", False)


def test_a_huge_file_costs_only_its_head_and_tail_to_read(tmp_path):
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as handle:
        handle.write(b"START")
        handle.truncate(8 * 1024**3)  # sparse: reading it whole would take minutes and gigabytes
        handle.seek(-3, 2)
        handle.write(b"END")
    with open(huge, "rb") as handle:
        text, cut = read_capped(handle.fileno(), 1000)
    assert cut and text.startswith("START") and text.endswith("END") and len(text) < 1100


def test_what_was_read_before_an_offset_is_not_read_again(tmp_path):
    log = tmp_path / "run.log"
    log.write_bytes(b"old output\nnew output\n")
    with open(log, "rb") as handle:
        assert read_capped(handle.fileno(), 100, offset=11) == ("new output\n", False)
        assert read_capped(handle.fileno(), 100, offset=100) == ("", False)


def test_a_flood_of_output_keeps_its_head_and_its_last_bytes_in_bounded_memory():
    capture = OutputCapture(1000)
    capture.add(b"HEAD")
    for _ in range(10_000):
        capture.add(b"y" * 100)
    capture.add(b"TAIL")
    text, cut = capture.text()
    assert cut and text.startswith("HEAD") and text.endswith("TAIL") and "bytes cut" in text
    assert len(capture.head) + len(capture.tail) <= 3 * 1000


def test_the_end_marker_the_shell_printed_is_dropped():
    capture = OutputCapture(1000)
    capture.add(b"hello\n__END__")
    capture.drop_last(len("__END__"))
    assert capture.text() == ("hello\n", False)
