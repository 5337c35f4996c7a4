"""Presented (Symposium) walkthroughs in the dashboard: rendering, picking locations, replies, actions, diffs."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import REVIEW
from tests.strategies import MARKDOWN_FORMS, broken
from walkthroughs.models import Feedback, PresentedWalkthrough

pytestmark = pytest.mark.django_db


@pytest.fixture
def repo_roots(settings, symposium_repo):
    settings.STACKBENCH_REPO_ROOTS = [str(symposium_repo.parent)]
    return symposium_repo


@pytest.fixture
def presented(repo_roots, review_walkthrough):
    return PresentedWalkthrough.present(review_walkthrough, str(repo_roots))


@pytest.fixture
def discussant_client(db):
    from tests.builders import logged_in, make_user

    return logged_in(make_user("discussant", "walkthroughs.add_feedback", "walkthroughs.change_presentedwalkthrough"))


def test_the_page_renders_every_section_and_element(viewer_client, presented):
    page = viewer_client.get(presented.get_absolute_url()).content.decode()
    assert "<strong>token validation</strong>" in page
    assert '<pre class="mermaid">flowchart LR; login --&gt; validate_token' in page
    assert '<code class="where">src/auth.py:4</code>' in page, "one match is placed directly"
    assert "5 possible locations" in page, "several matches get a picker"
    assert '<code class="where">docs/auth.md:3</code>' in page and '<code class="where">src/auth.py:8</code>' in page
    assert (
        'aria-label="question" title="question">?</span>' in page
        and 'aria-label="lightbulb" title="lightbulb">☼' in page
    )
    assert "All 2 commits" in page and "Staged changes" in page and "Unstaged changes" in page
    assert 'title="Comments in this walkthrough are about this file"' in page
    assert ">Checkpoint</button>" in page and ">Request changes</button>" in page


def test_a_location_that_matches_nothing_says_so(viewer_client, repo_roots):
    presented = PresentedWalkthrough.present(
        {
            "highlights": [
                {
                    "comment": {
                        "location": {"search": {"path": "src/auth.py", "regex": "def nothing_here"}},
                        "content": "lost",
                    }
                }
            ]
        },
        str(repo_roots),
    )
    page = viewer_client.get(presented.get_absolute_url()).content.decode()
    assert "location not found" in page and "lost" in page


def test_picking_one_of_several_locations_is_kept_and_can_be_changed(discussant_client, viewer_client, presented):
    url = reverse("presented_choose", args=[presented.pk, "highlights.2"])
    assert viewer_client.post(url, {"match": "src/auth.py:17"}).status_code == 403
    assert discussant_client.post(url, {"match": "nowhere.py:1"}).status_code == 400
    card = discussant_client.post(url, {"match": "src/auth.py:17"}, HTTP_HX_REQUEST="true").content.decode()
    assert card.lstrip().startswith('<article class="comment-card comment-placed" id="comment-highlights-2">')
    assert '<code class="where">src/auth.py:17</code>' in card and "Change location (5 matches)" in card
    discussant_client.post(url, {"match": "src/test_auth.py:5"})
    presented.refresh_from_db()
    assert presented.chosen_locations == {"highlights.2": "src/test_auth.py:5"}


def test_a_reply_carries_the_comment_context(discussant_client, presented):
    response = discussant_client.post(
        reverse("presented_reply", args=[presented.pk, "highlights.1"]), {"message": "Is the default secret safe?"}
    )
    assert response.status_code == 302 and response["Location"].endswith("#comment-highlights-1")
    feedback = Feedback.objects.get()
    assert feedback.kind == "reply" and feedback.element_key == "highlights.1"
    assert feedback.text == (
        "<context>In reply to comment on src/auth.py?def validate_token (line 4).</context> Is the default secret safe?"
    )
    discussant_client.post(reverse("presented_reply", args=[presented.pk, "highlights.3"]), {"message": "ok"})
    assert Feedback.objects.last().text == "<context>In reply to comment on docs/auth.md (line 3).</context> ok"


def test_an_action_sends_tell_agent_with_newlines_replaced_and_shows_in_the_history(discussant_client, presented):
    response = discussant_client.post(
        reverse("presented_action", args=[presented.pk, "actions.1"]), HTTP_HX_REQUEST="true"
    )
    assert json.loads(response["HX-Trigger"]) == {"feedback-sent": {}}
    assert '<section class="card" id="feedback" hx-swap-oob="true">' in response.content.decode()
    assert Feedback.objects.get().text == "I'd like more changes. Let's discuss them first."
    assert (
        "I&#x27;d like more changes. Let&#x27;s discuss them first."
        in discussant_client.get(presented.get_absolute_url()).content.decode()
    )


def test_file_diffs_open_in_place_or_as_a_page(viewer_client, presented):
    url = reverse("presented_diff", args=[presented.pk])
    params = {"element": "changes.0", "node": "unstaged", "path": "src/auth.py"}
    partial = viewer_client.get(url, params, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<div id="diff" class="diff-view">') and 'class="add"' in partial
    assert "refresh" in partial and '<td class="ln">16</td>' in partial
    assert viewer_client.get(url, params)["Location"].startswith(presented.get_absolute_url() + "?element=changes.0")
    page = viewer_client.get(presented.get_absolute_url(), params).content.decode()
    assert '<table class="diff" aria-label="Diff of src/auth.py">' in page
    assert (
        viewer_client.get(url, {**params, "path": "../../etc/passwd"}, HTTP_HX_REQUEST="true")
        .content.decode()
        .count("not part of this diff")
        == 1
    )
    assert viewer_client.get(url, {**params, "element": "highlights.0"}, HTTP_HX_REQUEST="true").status_code == 404


def test_clearing_archives_the_walkthrough(discussant_client, presented):
    response = discussant_client.post(reverse("presented_clear", args=[presented.pk]))
    assert response["Location"] == reverse("presented_list")
    presented.refresh_from_db()
    assert presented.archived_at is not None
    assert presented.get_absolute_url() not in discussant_client.get(reverse("presented_list")).content.decode()
    assert (
        presented.get_absolute_url()
        in discussant_client.get(reverse("presented_list") + "?archived=1").content.decode()
    )
    assert "Cleared on" in discussant_client.get(presented.get_absolute_url()).content.decode()


def test_the_present_form(maintainer_client, repo_roots, presenter):
    assert maintainer_client.get(reverse("presented_new")).status_code == 403
    markdown = "# Hello docs\n\n```comment\nlocation: findDefinition(`login`)\n\nEntry point.\n```\n"
    response = presenter.post(reverse("presented_new"), {"walkthrough": markdown, "repo_path": str(repo_roots)})
    presented = PresentedWalkthrough.objects.get()
    assert response["Location"] == presented.get_absolute_url()
    assert (presented.title, presented.source_format, presented.source_text) == ("Hello docs", "markdown", markdown)
    bad = presenter.post(reverse("presented_new"), {"walkthrough": "{", "repo_path": str(repo_roots)}).content.decode()
    assert "not valid JSON" in bad


@pytest.fixture
def presenter():
    from tests.builders import logged_in, make_user

    return logged_in(make_user("presenter", "walkthroughs.add_presentedwalkthrough"))


@given(
    source=st.one_of(
        MARKDOWN_FORMS.map(str.encode),
        broken(REVIEW).map(lambda value: json.dumps(value).encode()),
        st.binary(max_size=300),
    )
)
def test_any_uploaded_walkthrough_is_presented_or_refused_with_a_reason(repo_roots, presenter, source):
    response = presenter.post(
        reverse("presented_new"), {"file": SimpleUploadedFile("walkthrough.md", source), "repo_path": str(repo_roots)}
    )
    if response.status_code == 302:
        assert presenter.get(response["Location"]).status_code == 200
    else:
        assert response.status_code == 200 and 'class="errorlist' in response.content.decode()


def test_a_reply_threads_under_its_comment_as_written_and_an_action_shows_it_was_sent(discussant_client, presented):
    reply = discussant_client.post(
        reverse("presented_reply", args=[presented.pk, "highlights.1"]),
        {"message": "Is the default secret safe?"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    assert '<div class="thread" id="thread-highlights-1" hx-swap-oob="true">' in reply
    assert "Is the default secret safe?" in reply
    page = discussant_client.get(presented.get_absolute_url()).content.decode()
    card = page[page.index('id="comment-highlights-1"') :].split("</article>")[0]
    assert '<p class="preserve">Is the default secret safe?</p>' in card and "&lt;context&gt;" not in card
    history = page[page.index('id="feedback"') :]
    assert "<summary>What the agent receives</summary>" in history and "&lt;context&gt;In reply to" in history

    sent = discussant_client.post(
        reverse("presented_action", args=[presented.pk, "actions.1"]), HTTP_HX_REQUEST="true"
    ).content.decode()
    assert '<div class="thread" id="thread-actions-1" hx-swap-oob="true">' in sent and "Sent ✓" in sent
    assert "Sent ✓" in discussant_client.get(presented.get_absolute_url()).content.decode()
