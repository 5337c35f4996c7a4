from datetime import timedelta

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince

from stackbench.lib.markdown import highlight_code, render_inline, render_markdown

register = template.Library()


@register.filter
def markdown(text, asset_base=""):
    """Markdown as HTML; `|markdown:asset_base` points relative images at the docs they came from."""
    return mark_safe(render_markdown(text or "", asset_base or ""))


@register.filter
def domid(key):
    """An element key such as "highlights.2" as an id usable in CSS selectors: "highlights-2"."""
    return str(key).replace(".", "-")


@register.filter
def ago(moment):
    """ "just now" under a minute (never "0 minutes ago"), else "3 hours ago"."""
    if moment is None:
        return ""
    if timezone.now() - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment)} ago"


@register.filter
def inline_markdown(text):
    return mark_safe(render_inline(text or ""))


@register.filter
def code(text, language="python"):
    return mark_safe(highlight_code(text or "", language or "python"))


@register.filter
def duration(value):
    """12.3 (seconds) or a timedelta -> '12 s', '3 min 04 s', '1 h 02 min'."""
    if value is None or value == "":
        return "—"
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@register.simple_tag
def timeline_cells(cells):
    """One row of the per-step timeline. Built here rather than in a template loop: a 10 x 500 grid is 5,000
    cells, and every part of a cell is a number or one of a few fixed words (nothing to escape)."""
    gaps_url = reverse("gaps")
    parts = []
    for cell in cells:
        label = cell.label
        if cell.count:
            inner = (
                f'<a href="{gaps_url}?run={cell.run.pk}&amp;step={cell.step_number}" aria-label="{label}">'
                f"{cell.symbol}</a>"
            )
        else:
            inner = f'<span aria-label="{label}">{cell.symbol}</span>'
        parts.append(f'<td class="cell-{cell.state}" title="{label}">{inner}</td>')
    return mark_safe("".join(parts))


@register.simple_tag
def timeline_header(runs):
    """The runs across the top of the timeline, each a link to its run."""
    prefix = reverse("run", args=[0])[:-2]
    return mark_safe(
        "".join(
            f'<th><a href="{prefix}{run.pk}/" title="Run #{run.pk}, {run.created_at:%Y-%m-%d %H:%M}">{run.pk}</a></th>'
            for run in runs
        )
    )


@register.filter
def get(mapping, key):
    return (mapping or {}).get(key, 0)


@register.simple_tag(takes_context=True)
def query(context, **changes):
    """The current query string with some parameters changed (None removes one); keeps filters in links."""
    params = context["request"].GET.copy()
    for key, value in changes.items():
        if value is None or value == "":
            params.pop(key, None)
        else:
            params[key] = value
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.filter
def entries(mapping, key):
    """mapping[key] or an empty list (feedback by element key, in templates)."""
    return (mapping or {}).get(key, [])
