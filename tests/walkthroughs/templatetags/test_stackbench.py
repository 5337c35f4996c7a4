from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from django.template import Context, Template
from django.test import RequestFactory
from django.urls import reverse
from django.utils import timezone

from walkthroughs.templatetags.stackbench import (
    ago,
    code,
    domid,
    duration,
    entries,
    get,
    inline_markdown,
    markdown,
    timeline_cells,
    timeline_header,
)


def test_a_moment_under_a_minute_old_is_just_now_and_older_ones_say_how_long_ago():
    assert ago(timezone.now() - timedelta(seconds=20)) == "just now"
    assert ago(timezone.now() - timedelta(hours=3, seconds=5)) == "3\xa0hours ago"
    assert ago(None) == ""


@pytest.mark.parametrize(
    "value, shown",
    [
        (None, "—"),
        ("", "—"),
        (3.14, "3.1 s"),
        ("12.6", "13 s"),
        (59.4, "59 s"),
        (184, "3 min 04 s"),
        (timedelta(hours=1, minutes=2, seconds=59), "1 h 02 min"),
        (timedelta(hours=26), "26 h 00 min"),
    ],
)
def test_a_duration_reads_in_the_largest_units_that_matter(value, shown):
    assert duration(value) == shown


def test_an_element_key_becomes_an_id_css_can_select():
    assert domid("actions.1.content.0") == "actions-1-content-0" and domid(3) == "3"


def test_lookups_in_templates_default_to_zero_or_an_empty_list():
    assert get({"critical": 2}, "critical") == 2 and get({"critical": 2}, "warning") == 0 and get(None, "x") == 0
    assert entries({"a.1": ["reply"]}, "a.1") == ["reply"] and entries(None, "a.1") == []


def test_markdown_is_rendered_without_the_html_it_contains_and_images_point_at_the_docs():
    html = markdown("Hello **docs** <script>alert(1)</script> ![logo](img/logo.png)", "/library/1/docs/guide/")
    assert "<strong>docs</strong>" in html and "<script>" not in html and "&lt;script&gt;" in html
    assert 'src="/library/1/docs/guide/img/logo.png"' in html
    assert markdown(None) == ""


def test_a_finding_line_keeps_code_spans_and_shows_names_as_typed():
    assert inline_markdown("`x` in *.txt and __init__.py") == "<code>x</code> in *.txt and __init__.py"
    assert inline_markdown(None) == ""


def test_code_is_highlighted_as_python_unless_told_otherwise():
    assert code("def f(): pass").startswith('<pre class="highlight"><code class="language-python"><span class="hl-k">')
    assert '<span class="hl-nt">b</span>' in code("<b>", "html") and "<b>" not in code("<b>", "html")
    assert 'class="language-python"' in code("x = 1", "")


def run(pk, created_at=datetime(2026, 11, 1, 10, 5, tzinfo=UTC)):
    return SimpleNamespace(pk=pk, created_at=created_at)


def test_a_timeline_cell_with_gaps_links_to_them_and_one_without_is_plain():
    with_gaps = SimpleNamespace(run=run(7), step_number=3, state="critical", count=2, symbol="▲", label="two gaps")
    passed = SimpleNamespace(run=run(7), step_number=4, state="passed", count=0, symbol="✓", label="passed")
    html = timeline_cells([with_gaps, passed])
    gaps = reverse("gaps")
    assert html == (
        f'<td class="cell-critical" title="two gaps"><a href="{gaps}?run=7&amp;step=3" aria-label="two gaps">▲</a></td>'
        '<td class="cell-passed" title="passed"><span aria-label="passed">✓</span></td>'
    )


def test_the_timeline_header_links_each_run():
    html = timeline_header([run(7), run(12)])
    assert html.count("<th>") == 2
    assert f'<a href="{reverse("run", args=[12])}" title="Run #12, 2026-11-01 10:05">12</a>' in html


def test_a_query_string_keeps_the_filters_and_changes_what_it_is_told():
    request = RequestFactory().get("/gaps/", {"severity": "critical", "page": "3", "q": "seed data"})
    render = Template("{% load stackbench %}{% query page=4 q=None %}|{% query severity='' page='' q='' %}").render
    changed, emptied = render(Context({"request": request})).split("|")
    assert changed == "?severity=critical&amp;page=4" and emptied == "?"
