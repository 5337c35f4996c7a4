"""What every template may use: the severity scales, so pages list severities from the one definition, and whether
the periodic recovery of stalled runs has stopped (a banner says so)."""

from django.conf import settings

from audits.models import ServiceBeat
from stackbench.formats.results import EXAMPLE_SEVERITY
from stackbench.formats.walkthrough import GAP_SEVERITY


def severities(request):
    return {"gap_severities": GAP_SEVERITY.names, "example_severities": EXAMPLE_SEVERITY.names}


def recovery(request):
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    return {
        "recovery_silent_since": ServiceBeat.silent_since(
            ServiceBeat.RECOVERY, settings.STACKBENCH_RECOVERY_ALERT_SECONDS
        )
    }
