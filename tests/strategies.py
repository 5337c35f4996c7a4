"""Hypothesis strategies for hostile input: arbitrary JSON, and real documents with one part broken."""

import json

from hypothesis import strategies as st

TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "../../etc/passwd",
            "<script>alert(1)</script>",
            "--output=x",
            "💥" * 3,
            "\u202e",
            "null",
            "-1",
            "1e999",
        ]
    ),
    st.integers(10_000, 300_000).map(lambda n: "x" * n),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)
DEEP_NESTING = st.integers(500, 200_000).map(lambda depth: "[" * depth + "]" * depth)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, prefix + (index,))


@st.composite
def broken(draw, document):
    """The document with one node replaced by arbitrary JSON, or removed."""
    copy = json.loads(json.dumps(document))
    path = draw(st.sampled_from(list(_paths(copy))))
    if not path:
        return draw(JSON_VALUES)
    parent = copy
    for part in path[:-1]:
        parent = parent[part]
    if draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON_VALUES)
    return copy


def raw_files(documents):
    """Bytes a user might upload: broken real documents, random JSON, deep nesting, or binary junk."""
    return st.one_of(
        *[broken(document).map(lambda value: json.dumps(value).encode()) for document in documents],
        JSON_VALUES.map(lambda value: json.dumps(value).encode()),
        DEEP_NESTING.map(str.encode),
        st.binary(max_size=200),
    )


UPLOAD_NAMES = st.sampled_from(
    [
        "wt_fuzz.json",
        "wt_fuzz_audit.json",
        "wt_fuzz_session.json",
        "a_validation.json",
        "validation_summary.json",
        "fuzz_analysis.json",
        "notes.txt",
    ]
)
FENCED_BLOCKS = st.builds(
    lambda kind, info, header, body: f"```{kind}{info}\n{header}\n\n{body}\n```",
    st.sampled_from(["mermaid", "comment", "gitdiff", "action", "python", ""]),
    st.sampled_from(["", "(range=HEAD~1)", '(button=`Go`, tell-agent="x")', "((", "(location=x)"]),
    st.sampled_from(
        [
            "location: findDefinition(`login`)",
            "location: search(`src`, `x`)",
            "location: (",
            "location: findReferences(`a`, `b`, `c`)",
            "range: --output=x",
            "button:",
            "icon: 💥",
            "exclude-unstaged: maybe",
            "",
        ]
    ),
    TEXT,
)
MARKDOWN_FORMS = st.lists(st.one_of(TEXT, FENCED_BLOCKS), max_size=6).map("\n\n".join)
