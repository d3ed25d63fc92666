"""Every refusal true and specific (issue 49 item 5): a valid multi-line JSON document of a shape no
format knows is named by its keys, not called invalid JSON; an opencode export is not "read as
mini-swe-agent"; an older Claude Code log's result usage counts as its totals."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.replay import TrajectoryError, load
from tests.replay.test_real_variants import assistant, init, result, tool_use, usage, write


@pytest.mark.parametrize("document, keys", [  # (a Gemini CLI session's shape is read since issue 62)
    ({"sessionId": "s", "startTime": "2026-12-01", "turns": [{"type": "gemini"}]}, "sessionId, startTime, turns"),
    ({"task": "x", "steps": [1, 2]}, "steps, task")])
def test_a_valid_pretty_printed_document_of_an_unknown_shape_is_named_by_its_keys(tmp_path, document, keys):
    path = tmp_path / "session.json"
    path.write_text(json.dumps(document, indent=2))
    with pytest.raises(TrajectoryError) as refused:
        load(path)
    assert f"not a trajectory I know (keys: {keys})" in str(refused.value) and "invalid JSON" not in str(refused.value)


def test_a_broken_pretty_printed_document_is_invalid_json_at_its_line(tmp_path):
    path = tmp_path / "session.json"
    path.write_text('{\n  "messages": [\n    {"role": "user",\n')
    with pytest.raises(TrajectoryError, match=r"session\.json:3: invalid JSON"):
        load(path)


def test_an_older_claude_code_log_with_result_usage_and_no_model_usage_takes_its_output_from_there(tmp_path):
    lines = [init(), assistant("msg_1", [tool_use("toolu_1")], usage(10, 20_000, 0, out=3)), result("toolu_1", "a"),
             assistant("msg_2", [{"type": "text", "text": "Done. " * 200}], usage(10, 100, 20_000, out=3)),
             {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2, "total_cost_usd": 0.1,
              "usage": {"input_tokens": 20, "cache_creation_input_tokens": 20_100, "cache_read_input_tokens": 20_000,
                        "output_tokens": 900}}]
    (run,) = load(write(tmp_path / "old.stream.jsonl", lines))
    assert sum(c.usage.output for c in run.calls) == 900 and run.output_from == "result.usage"
    assert any("result event's usage (this log has no modelUsage)" in n for n in run.notes)
    assert not any("no totals" in n for n in run.notes)
