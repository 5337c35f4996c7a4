from stackbench.formats.results import EXAMPLE_SEVERITY, GATE_LEVELS
from stackbench.formats.walkthrough import GAP_SEVERITY
from stackbench.lib.severity import SeverityScale


def test_a_scale_ranks_its_most_severe_name_highest():
    scale = SeverityScale(("bad", "meh", "fine"))
    assert [scale.rank(name) for name in scale] == [3, 2, 1]
    assert scale.rank("unknown") == 0 and scale.rank(None) == 0
    assert [scale.name_of(rank) for rank in (3, 2, 1, 0, 4)] == ["bad", "meh", "fine", None, None]


def test_the_two_finding_scales_line_up_position_by_position():
    assert GAP_SEVERITY.names == ("critical", "warning", "info")
    assert EXAMPLE_SEVERITY.names == ("error", "warning", "info")
    assert [GAP_SEVERITY.rank(g) for g in GAP_SEVERITY] == [EXAMPLE_SEVERITY.rank(e) for e in EXAMPLE_SEVERITY]
    assert {level: rank for level, rank in GATE_LEVELS.items() if level.startswith("new-")} == {
        "new-critical": 3,
        "new-warning": 2,
        "new-info": 1,
        "new-error": 3,
    }
    assert GATE_LEVELS["open-error"] == GATE_LEVELS["open-critical"] == 3
