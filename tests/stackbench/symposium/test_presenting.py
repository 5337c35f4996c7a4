"""A Symposium walkthrough made ready to show, against the repository the sample walkthrough talks about."""

import pytest

from stackbench.formats.symposium import ActionElement, CommentElement, parse_walkthrough
from stackbench.symposium.presenting import codicon, find_element, present


@pytest.fixture
def review(review_walkthrough):
    walkthrough, _ = parse_walkthrough(review_walkthrough, "review")
    return walkthrough


@pytest.fixture
def shown(review, symposium_repo):
    return present(review, symposium_repo)


def test_every_section_becomes_items_keyed_by_where_they_stand(shown):
    sections = shown["sections"]
    assert list(sections) == ["introduction", "highlights", "changes", "actions"]
    assert [(item.kind, item.key) for item in sections["introduction"]] == [
        ("markdown", "introduction.0"),
        ("markdown", "introduction.1"),
    ]
    assert [item.kind for item in sections["highlights"]] == ["mermaid"] + ["comment"] * 5
    assert sections["highlights"][0].value.startswith("flowchart LR")
    assert [item.kind for item in sections["changes"]] == ["gitdiff", "gitdiff"]
    first_action = sections["actions"][0]
    assert (first_action.kind, first_action.value.button) == ("action", "Checkpoint")
    assert [child.key for child in sections["actions"][1].children] == ["actions.1.content.0"]
    comment = sections["highlights"][1]
    assert comment.value is shown["comments"]["highlights.1"]
    assert [(child.kind, child.key) for child in comment.children] == [("markdown", "highlights.1.content.0")]


def test_a_comment_with_one_match_is_placed_with_an_excerpt_and_several_need_a_pick(shown):
    comments = shown["comments"]
    placed, several = comments["highlights.1"], comments["highlights.2"]
    assert (placed.state, placed.chosen.label()) == ("placed", "src/auth.py:4")
    assert any(is_match and "def validate_token" in text for _, text, is_match in placed.excerpt)
    assert several.state == "ambiguous" and several.chosen is None and several.excerpt == []
    assert "src/test_auth.py:4" in [match.label() for match in several.matches]


def test_a_pick_made_earlier_places_an_ambiguous_comment_and_an_unknown_pick_is_ignored(review, symposium_repo):
    picked = present(review, symposium_repo, {"highlights.2": "src/test_auth.py:4"})["comments"]["highlights.2"]
    assert picked.state == "placed" and picked.chosen.label() == "src/test_auth.py:4" and picked.excerpt
    stale = present(review, symposium_repo, {"highlights.2": "src/gone.py:1"})["comments"]["highlights.2"]
    assert stale.state == "ambiguous" and stale.chosen is None


def test_a_location_nothing_matches_is_missing_and_a_bad_one_is_an_error(symposium_repo):
    walkthrough, _ = parse_walkthrough(
        {
            "introduction": [
                {"comment": {"location": {"search": {"path": "src", "regex": "no_such_name"}}, "content": "?"}},
                {"comment": {"location": {"search": {"path": "../outside", "regex": "x"}}, "content": "?"}},
            ]
        },
        "broken",
    )
    comments = present(walkthrough, symposium_repo)["comments"]
    assert comments["introduction.0"].state == "missing" and not comments["introduction.0"].error
    assert comments["introduction.1"].state == "error" and comments["introduction.1"].error


def test_a_reply_says_which_comment_it_answers_as_symposium_does(shown):
    comments = shown["comments"]
    assert comments["highlights.1"].reply_text("  Yes.  ") == (
        "<context>In reply to comment on src/auth.py?def validate_token (line 4).</context> Yes."
    )
    assert comments["highlights.3"].reply_text("Fine") == (
        "<context>In reply to comment on docs/auth.md (line 3).</context> Fine"
    )
    assert comments["highlights.4"].reply_text("Ok") == (
        "<context>In reply to comment on src/auth.py?login (line 8).</context> Ok"
    )
    assert comments["highlights.5"].reply_text("Which?") == (
        "<context>In reply to comment on validate_token.</context> Which?"
    )


def test_files_a_placed_comment_talks_about_are_marked_in_every_diff(shown):
    whole = shown["sections"]["changes"][0].value
    assert whole.revision_range == "HEAD~2..HEAD" and not whole.error
    marked = {(node.label, change.path): change.discussed for node in whole.nodes for change in node.files}
    assert marked[("All 2 commits", "src/auth.py")] and marked[("All 2 commits", "docs/auth.md")]
    assert not marked[("All 2 commits", "src/test_auth.py")], "only ambiguous comments point there"


def test_a_bad_revision_range_is_shown_as_an_error_of_its_diff(symposium_repo):
    walkthrough, _ = parse_walkthrough({"changes": [{"gitdiff": {"range": "no-such-rev..HEAD"}}]}, "bad range")
    (item,) = present(walkthrough, symposium_repo)["sections"]["changes"]
    assert item.value.nodes == [] and item.value.error


def test_without_actions_the_default_buttons_are_shown(symposium_repo):
    walkthrough, _ = parse_walkthrough({"introduction": ["Hello"]}, "plain")
    actions = present(walkthrough, symposium_repo)["sections"]["actions"]
    assert [(item.key, item.value.button) for item in actions] == [
        ("actions.0", "Checkpoint"),
        ("actions.1", "Request changes"),
    ]


@pytest.mark.parametrize(
    "icon, symbol, name",
    [
        ("$(question)", "?", "question"),
        ("lightbulb", "☼", "lightbulb"),
        (None, "✎", "comment"),
        ("  $(warning) ", "⚠", "warning"),
        ("$(unheard-of)", "✎", "unheard-of"),
        ("$()", "✎", "comment"),
    ],
)
def test_a_codicon_becomes_a_symbol_every_desktop_font_has_and_keeps_its_name(icon, symbol, name):
    assert codicon(icon) == (symbol, name)


def test_an_element_is_found_by_its_key_down_through_content(review):
    assert isinstance(find_element(review, "highlights.1"), CommentElement)
    assert find_element(review, "highlights.1.content.0") == "Is a default secret acceptable here? Please double-check."
    assert isinstance(find_element(review, "actions.1"), ActionElement)
    assert find_element(review, "actions.1.content.0") == "Ask for more work."
    assert find_element(review, "introduction.1") == "Start with the highlights, then look at the full diff."


@pytest.mark.parametrize(
    "key",
    ["", "nowhere.0", "highlights", "highlights.99", "highlights.x", "highlights.0.content.0", "highlights.1.body.0"],
)
def test_a_key_that_leads_nowhere_finds_nothing(review, key):
    assert find_element(review, key) is None
