from datetime import timedelta

from django.utils import timezone

from walkthroughs.templatetags.stackbench import ago


def test_a_moment_under_a_minute_old_is_just_now_and_older_ones_say_how_long_ago():
    assert ago(timezone.now() - timedelta(seconds=20)) == "just now"
    assert ago(timezone.now() - timedelta(hours=3, seconds=5)) == "3\xa0hours ago"
    assert ago(None) == ""
