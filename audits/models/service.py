"""Beats of the periodic duties, so the dashboard can tell when one stops."""

from datetime import timedelta

from django.db import models
from django.utils import timezone


class ServiceBeat(models.Model):
    """The last time a periodic duty ran (the recovery of stalled runs), so the dashboard can say when it stops."""

    RECOVERY = "recovery"

    name = models.CharField(max_length=50, primary_key=True)
    at = models.DateTimeField()

    @classmethod
    def beat(cls, name: str):
        cls.objects.update_or_create(name=name, defaults={"at": timezone.now()})

    @classmethod
    def silent_since(cls, name: str, seconds: float):
        """When the duty last ran, if that is longer ago than seconds (None when it ran lately or never ran)."""
        last = cls.objects.filter(name=name).values_list("at", flat=True).first()
        return last if last is not None and timezone.now() - last > timedelta(seconds=seconds) else None
