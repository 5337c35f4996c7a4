"""What every template may use: the severity scales, so pages list severities from the one definition."""

from audits.engines.formats import EXAMPLE_SEVERITY
from walkthroughs.engines.formats import GAP_SEVERITY


def severities(request):
    return {"gap_severities": GAP_SEVERITY.names, "example_severities": EXAMPLE_SEVERITY.names}
