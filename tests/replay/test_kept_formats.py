"""The formats people keep (issue 62 items 5-8): a Cline ui_messages.json alone, OpenHands event-stream
lists, Codex CLI session rollouts, Gemini CLI saved chats, and a Claude Code session with a junk line.
Every fixture is written here, at test time, in the shape the client's own source gives its files."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.replay import load, replay
from minimal_runtime.replay.report import rows, table
from tests.replay.test_real_variants import headless


@pytest.mark.parametrize("junk", ['"massive error"', "42", "[1, 2]"])
def test_a_junk_line_in_a_claude_code_log_is_skipped_with_a_note(tmp_path, junk):
    path = headless(tmp_path)
    lines = path.read_text().splitlines()
    lines.insert(3, junk)
    path.write_text("\n".join(lines) + "\n")
    (run,) = load(path)
    assert len(run.calls) == 3
    assert any(n.startswith("line 4 is not a JSON object") for n in run.notes)


def test_an_openhands_event_stream_list_is_read_and_priced_as_it_priced_itself(tmp_path):
    from tests.replay.cli_logs import write_openhands_events
    (run,) = load(write_openhands_events(tmp_path))
    assert run.source == "openhands" and len(run.calls) >= 5 and all(c.usage.cache_write is not None for c in run.calls)
    assert replay(run, "recorded").cost == pytest.approx(run.cost_usd, rel=0.05)


def test_a_cline_ui_messages_file_kept_alone_is_billed_from_its_requests(tmp_path):
    """Four public ones were refused ('part of a Cline task folder'), one of 53 requests and $12.39 (item 5)."""
    from tests.replay.cline_logs import write_cline
    history = write_cline(tmp_path, rounds=5)
    ui = history.with_name("ui_messages.json")
    requests = [m for m in json.loads(ui.read_text()) if m.get("say") == "api_req_started"]
    history.unlink()
    history.with_name("task_metadata.json").unlink()
    (run,) = load(ui)
    assert run.source == "cline-ui" and len(run.calls) == len(requests)
    assert run.cost_usd == pytest.approx(sum(json.loads(m["text"])["cost"] for m in requests))
    assert rows(run, [])[0]["cost"] == pytest.approx(run.cost_usd, rel=0.01)
    recorded = replay(run, "recorded")
    assert recorded.prompt_tokens == pytest.approx(rows(run, [])[0]["prompt_tokens"], rel=0.01)
    assert recorded.cost == pytest.approx(run.cost_usd, rel=0.05)
    assert "no api_conversation_history.json beside it" in table(run, [recorded])
