import pytest

from stackbench.lib.volatile import (
    ADDRESS,
    CLOCK,
    COMMA_MILLISECONDS,
    DATE,
    DURATION,
    EPOCH,
    GENERATED_NAME,
    HEX_ID,
    LONG_DECIMAL,
    OBJECT_ADDRESS,
    PATH,
    PROCESS_ID,
    RUN_TO_RUN,
    TEMPORARY_PATH,
    TIMESTAMP,
    URL,
    UUID,
    WEEKDAY_TIMESTAMP,
    masked,
)


@pytest.mark.parametrize(
    "value, text, shown",
    [
        (TIMESTAMP, "at 2024-05-06T07:08:09.123+02:00 then", "at <time> then"),
        (TIMESTAMP, "at 2024-05-06 07:08", "at <time>"),
        (DATE, "on 2024-05-06.", "on <date>."),
        (CLOCK, "at 7:08:09,5 sharp", "at <time> sharp"),
        (EPOCH, "ts 1700000000.25", "ts <epoch>"),
        (ADDRESS, "object at 0x7f00aa", "object at <addr>"),
        (UUID, "id=1b4e28ba-2fa1-11d2-883f-0016d3cca427", "id=<uuid>"),
        (DURATION, "took 3.2 s and 40ms", "took <duration> and <duration>"),
        (PROCESS_ID, "pid=4242", "<id>"),
        (LONG_DECIMAL, "loss 0.693147", "loss <number>"),
        (URL, "see https://x.dev/a?b=1 now", "see <url> now"),
        (PATH, "in /tmp/abc/x.py", "in <path>"),
        (HEX_ID, "commit deadbeef12345", "commit <id>"),
        (WEEKDAY_TIMESTAMP, "at Mon Jan  1 10:00:00 2024.", "at <time>."),
        (WEEKDAY_TIMESTAMP, "Date: Tue, 04 Mar 2026 11:22:33 GMT", "Date: <time>"),
        (OBJECT_ADDRESS, "<Foo object at 0x7f..>", "<Foo object at <addr>>"),
        (TEMPORARY_PATH, "PosixPath('/tmp/pytest-of-root/pytest-3/x0')", "PosixPath('<tmp>')"),
        (TEMPORARY_PATH, "in /var/folders/x1/abc/T/tmpq", "in <tmp>"),
        (GENERATED_NAME, "FROM `t4711` AS `t4711` JOIN q2 ON", "FROM `<name>` AS `<name>` JOIN <name> ON"),
    ],
)
def test_each_run_to_run_value_is_shown_as_its_mask(value, text, shown):
    assert masked(text, [value]) == shown


def test_short_hex_numbers_single_folders_and_long_numbers_are_values_not_noise():
    text = "hex(255) is 0xff in /tmp; 20! is 2432902008176640000; see /usr/lib/x"
    assert masked(text, [ADDRESS, TEMPORARY_PATH, HEX_ID]) == text
    assert masked(text, RUN_TO_RUN) == text


def test_loggings_milliseconds_go_with_the_timestamp_they_belong_to():
    assert masked("2024-05-06 07:08:09,123 INFO", [COMMA_MILLISECONDS, TIMESTAMP]) == "<time> INFO"
    assert masked("07:08:09,123 INFO", [COMMA_MILLISECONDS]) == "07:08:09,123 INFO"
