"""The heartbeat of a periodic duty: when it beat last, and whether it has been silent too long."""

from datetime import timedelta

import pytest
from django.utils import timezone

from audits.models import ServiceBeat

pytestmark = pytest.mark.django_db


def test_a_beat_is_recorded_and_a_later_one_replaces_it():
    ServiceBeat.beat(ServiceBeat.RECOVERY)
    assert timezone.now() - ServiceBeat.objects.get().at < timedelta(minutes=1)
    ServiceBeat.objects.update(at=timezone.now() - timedelta(hours=1))
    ServiceBeat.beat(ServiceBeat.RECOVERY)
    assert ServiceBeat.objects.count() == 1
    assert timezone.now() - ServiceBeat.objects.get().at < timedelta(minutes=1)


def test_a_duty_that_never_ran_or_ran_lately_is_not_silent():
    assert ServiceBeat.silent_since(ServiceBeat.RECOVERY, 60) is None
    ServiceBeat.beat(ServiceBeat.RECOVERY)
    assert ServiceBeat.silent_since(ServiceBeat.RECOVERY, 60) is None


def test_a_duty_silent_longer_than_the_limit_says_since_when():
    last = timezone.now() - timedelta(minutes=20)
    ServiceBeat.objects.create(name=ServiceBeat.RECOVERY, at=last)
    assert ServiceBeat.silent_since(ServiceBeat.RECOVERY, 60) == last
    assert ServiceBeat.silent_since(ServiceBeat.RECOVERY, 30 * 60) is None, "twenty minutes is within half an hour"
    assert ServiceBeat.silent_since("another duty", 60) is None, "each duty beats for itself"
