import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackbench.formats.symposium import (
    ActionElement,
    CommentElement,
    GitDiffElement,
    MermaidElement,
    actions_or_default,
    iter_comments,
    iter_gitdiffs,
    parse_location_expression,
    parse_walkthrough,
)
from stackbench.lib.jsonfiles import FormatError
from tests.builders import REVIEW
from tests.strategies import DEEP_NESTING, MARKDOWN_FORMS, broken

MARKDOWN_FORM = """# Token validation

Tokens are now compared in constant time.

```mermaid
flowchart LR
    login --> validate_token
```

```comment
location: findDefinition(`validate_token`)
icon: lightbulb

Constant-time **comparison**.
```

```comment
location: search(`src`, `validate_token\\(`, `.py`)

Every caller.
```

```comment
location: lines(`docs/auth.md`, 3, 4)

The docs.
```

```gitdiff
range: HEAD~2..HEAD
exclude_unstaged: true
```

```action
button: Run the tests

Run the test suite
and report back.
```

```python
print("an ordinary code block stays markdown")
```
"""


def test_the_fixture_parses_with_every_element_and_location_kind(review_walkthrough):
    walkthrough, form = parse_walkthrough(review_walkthrough, "review.walkthrough.json")
    assert form == "json"
    assert walkthrough.title() == "This change hardens token validation and documents the new logout call."
    kinds = [type(e).__name__ if not isinstance(e, str) else "markdown" for e in walkthrough.highlights]
    assert kinds == [
        "MermaidElement",
        "CommentElement",
        "CommentElement",
        "CommentElement",
        "CommentElement",
        "CommentElement",
    ]
    locations = [comment.location for _, comment in iter_comments(walkthrough)]
    assert locations[0].search.path == "src/auth.py" and locations[1].search.path == "src"
    assert locations[2].range.line == 3 and locations[3].findDefinitions == "login"
    assert locations[4].findReferences == "validate_token"
    assert [(key, g.range, g.exclude.unstaged) for key, g in iter_gitdiffs(walkthrough)] == [
        ("changes.0", "HEAD~2..HEAD", False),
        ("changes.1", "HEAD", True),
    ]
    first, second = walkthrough.actions
    assert first.action.content == ["Ship it if the docs read well."] and second.action.content == [
        "Ask for more work."
    ]


def test_actions_send_tell_agent_with_newlines_replaced(review_walkthrough):
    walkthrough, _ = parse_walkthrough(review_walkthrough)
    assert [a.action.message() for a in walkthrough.actions] == [
        "Checkpoint",
        "I'd like more changes. Let's discuss them first.",
    ]


def test_with_no_actions_the_defaults_are_checkpoint_and_request_changes():
    walkthrough, _ = parse_walkthrough({"introduction": "Just words."})
    assert [a.action.button for a in actions_or_default(walkthrough)] == ["Checkpoint", "Request changes"]


def test_the_markdown_form_reads_fenced_blocks_with_headers():
    walkthrough, form = parse_walkthrough(MARKDOWN_FORM, "review.md")
    assert form == "markdown" and walkthrough.title() == "Token validation"
    elements = walkthrough.introduction
    assert isinstance(elements[0], str) and elements[0].startswith("# Token validation")
    assert isinstance(elements[1], MermaidElement) and "login --> validate_token" in elements[1].mermaid
    definition, search, lines = elements[2].comment, elements[3].comment, elements[4].comment
    assert (definition.location.findDefinitions, definition.icon, definition.content) == (
        "validate_token",
        "lightbulb",
        ["Constant-time **comparison**."],
    )
    assert (search.location.search.path, search.location.search.regex, search.location.search.extension) == (
        "src",
        "validate_token\\(",
        ".py",
    )
    assert (lines.location.range.line, lines.location.range.end_line) == (3, 4)
    assert isinstance(elements[5], GitDiffElement) and elements[5].gitdiff.exclude.unstaged
    assert (
        isinstance(elements[6], ActionElement) and elements[6].action.message() == "Run the test suite and report back."
    )
    assert isinstance(elements[7], str) and "an ordinary code block" in elements[7]


def test_both_spellings_of_each_field_are_accepted():
    walkthrough, _ = parse_walkthrough(
        {
            "changes": [{"gitdiff": {"commit_range": "HEAD"}}, {"gitdiff": {"range": "HEAD~1"}}],
            "highlights": [{"comment": {"location": {"search": {"file": "a.py", "regex": "x"}}, "content": "c"}}],
            "actions": [
                {"action": {"content": "why", "button": "B"}},
                {"action": {"description": "why", "button": "C"}},
            ],
        }
    )
    assert [g.gitdiff.range for g in walkthrough.changes] == ["HEAD", "HEAD~1"]
    assert walkthrough.highlights[0].comment.location.search.path == "a.py"
    assert [a.action.content for a in walkthrough.actions] == [["why"], ["why"]]


def test_a_stored_copy_reads_back_the_same(review_walkthrough):
    walkthrough, _ = parse_walkthrough(review_walkthrough)
    again, _ = parse_walkthrough(walkthrough.model_dump(mode="json", exclude_none=True))
    assert again == walkthrough


@pytest.mark.parametrize(
    "source, message",
    [
        ('{"introduction": [', "not valid JSON"),
        ("[1, 2]", "a walkthrough is a JSON object"),
        ({"introduction": [{"video": "x"}]}, "introduction.0: expected markdown text or an object with exactly one of"),
        ({"highlights": [{"comment": {"content": "no location"}}]}, "highlights.0.comment.location: Field required"),
        ({"highlights": [{"comment": {"location": {"search": {"path": "a"}}, "content": "c"}}]}, "regex"),
        (
            {
                "highlights": [
                    {"comment": {"location": {"findDefinitions": "a", "findReferences": "b"}, "content": "c"}}
                ]
            },
            "a location is exactly one of",
        ),
        ({"changes": [{"gitdiff": {}}]}, "changes.0.gitdiff.range"),
        ({"actions": [{"action": {"tell_agent": "x"}}]}, "actions.0.action.button: Field required"),
        ({"introduction": "x", "extra": 1}, "extra: Extra inputs are not permitted"),
        (
            {"highlights": [{"comment": {"location": {"range": {"path": "a", "line": 0}}, "content": "c"}}]},
            "line: Input should be greater than or equal to 1",
        ),
        ("# T\n\n```comment\nicon: x\n\nno location\n```\n", "line 3: a comment block needs a `location:` header"),
        ("```comment\nlocation: grep(`x`)\n\nbody\n```\n", "cannot read location"),
        ("```gitdiff\nexclude_staged: true\n```\n", "needs a `range:` header"),
        ("```action\n\nno button\n```\n", "needs a `button:` header"),
    ],
)
def test_malformed_walkthroughs_get_errors_that_name_the_problem(source, message):
    with pytest.raises(FormatError) as error:
        parse_walkthrough(source if isinstance(source, str) else source, "wt")
    assert message in str(error.value)


def test_deeply_nested_or_huge_input_is_refused_cleanly():
    deep = '{"introduction": ' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(FormatError):
        parse_walkthrough(deep)
    with pytest.raises(FormatError, match="characters is over the"):
        parse_walkthrough("x" * 3_000_000)


def test_location_expressions():
    assert parse_location_expression('findDefinitions("Token")') == {"findDefinitions": "Token"}
    assert parse_location_expression("findReferences(`x`)") == {"findReferences": "x"}
    assert parse_location_expression("search('a.rs', 'fn \\\\w+')")["search"]["path"] == "a.rs"
    with pytest.raises(ValueError):
        parse_location_expression("lines(`a`, x)")


def test_comments_nested_in_comment_content_are_found():
    walkthrough, _ = parse_walkthrough(
        {
            "highlights": [
                {
                    "comment": {
                        "location": {"findDefinitions": "a"},
                        "content": ["text", {"comment": {"location": {"findReferences": "b"}, "content": "inner"}}],
                    }
                }
            ]
        }
    )
    assert [key for key, _ in iter_comments(walkthrough)] == ["highlights.0", "highlights.0.content.1"]
    assert isinstance(walkthrough.highlights[0], CommentElement)
    assert json.loads(walkthrough.model_dump_json())["highlights"][0]["comment"]["content"][0] == "text"


@given(source=st.one_of(MARKDOWN_FORMS, broken(REVIEW).map(json.dumps), st.text(), DEEP_NESTING))
def test_any_input_parses_or_gets_an_error_naming_the_walkthrough(source):
    try:
        walkthrough, _ = parse_walkthrough(source)
    except FormatError as exc:
        assert str(exc).startswith("walkthrough")
    else:
        assert walkthrough.title()
        list(iter_comments(walkthrough)), list(iter_gitdiffs(walkthrough)), actions_or_default(walkthrough)
