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


@pytest.mark.filterwarnings("ignore:model 'gpt-5-codex' is not in the model table")  # the table says so
def test_a_codex_cli_session_rollout_is_read_call_by_call_with_its_usage(tmp_path, capsys):
    from minimal_runtime.__main__ import main
    from tests.replay.cli_logs import write_codex_rollout
    path = write_codex_rollout(tmp_path, model="gpt-5-codex")
    (run,) = load(path)
    assert run.source == "codex-rollout" and run.model == "gpt-5-codex" and len(run.calls) >= 5
    assert all(c.usage and c.usage.cache_read is not None for c in run.calls)
    assert all(b["tool_use_id"] in {u["id"] for c in run.calls for u in c.assistant["content"] if u["type"] == "tool_use"}
               for c in run.calls for b in c.results.values())
    recorded = replay(run, "recorded", model="claude-sonnet-4-6")  # gpt-5-codex is not in the price table
    assert recorded.prompt_tokens == pytest.approx(rows(run, [])[0]["prompt_tokens"], rel=0.01)
    main(["replay", str(path), "--strategy", "recorded", "--plot", "none"])
    assert "n/a" in capsys.readouterr().out  # unpriced, not a wrong number


def test_a_gemini_cli_chat_is_read_and_priced_at_gemini_s_list(tmp_path, capsys):
    from minimal_runtime.__main__ import main
    from tests.replay.cli_logs import write_gemini_chat
    (run,) = load(write_gemini_chat(tmp_path))
    assert run.source == "gemini-cli" and run.model == "gemini-2.5-pro" and len(run.calls) >= 5
    # Gemini 2.5 Pro, prompts under 200k tokens: $1.25 input, $0.125 cached, $10 output per MTok
    own = sum(((c.usage.prompt_tokens - c.usage.cache_read) * 1.25 + c.usage.cache_read * 0.125
               + c.usage.output * 10) / 1e6 for c in run.calls)
    assert rows(run, [])[0]["cost"] == pytest.approx(own)
    recorded = replay(run, "recorded")
    assert recorded.cost == pytest.approx(own, rel=0.05)
    assert any("Gemini's list prices" in n for n in recorded.notes)
    unknown = write_gemini_chat(tmp_path / "old", model="gemini-1.0-ultra")
    main(["replay", str(unknown), "--strategy", "recorded", "--plot", "none"])
    captured = capsys.readouterr()
    assert "n/a" in captured.out and "--model" in captured.out + captured.err
