"""The coding-agent CLIs' own files (``replay/formats/``: cline_cli, opencode, pi, codex, aider),
generated at test time in each CLI's shape (``cli_logs.py``): each imports whole, with the usage
it logged per call, and ``recorded`` bills it within a cent or 2% of its own cost."""

from __future__ import annotations

import pytest

from minimal_runtime.replay import TrajectoryError, load, replay, table
from tests.replay.cli_logs import write_cline_cli, write_codex, write_opencode, write_pi

PRICED = {"cline-cli": write_cline_cli, "opencode": write_opencode, "pi": write_pi}


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    return {name: write(root / name) for name, write in PRICED.items()}


@pytest.mark.parametrize("fmt", sorted(PRICED))
def test_each_cli_log_imports_with_its_usage_and_recorded_bills_its_own_cost(logs, fmt):
    (run,) = load(logs[fmt])
    assert run.source == fmt and run.model == "claude-sonnet-4-6" and len(run.calls) >= 6
    assert all(c.usage and c.usage.cache_read is not None for c in run.calls)
    assert sum(len(c.results) for c in run.calls) == len(run.calls) - 2  # every tool call answered
    recorded = replay(run, "recorded")
    assert recorded.finished and len(recorded.calls) == len(run.calls)
    assert recorded.cost == pytest.approx(run.cost_usd, rel=0.02), (recorded.cost, run.cost_usd)
    assert f"${run.cost_usd:.4f}" in table(run, [recorded])


def test_an_opencode_message_of_several_steps_is_several_calls(tmp_path, logs):
    (one,) = load(logs["opencode"])
    (merged,) = load(write_opencode(tmp_path, steps_per_message=3))
    assert [c.usage for c in merged.calls] == [c.usage for c in one.calls]


def test_a_pi_session_replays_the_branch_that_ends_at_its_last_entry(tmp_path, logs):
    (straight,) = load(logs["pi"])
    (branched,) = load(write_pi(tmp_path, branch=True))
    assert len(branched.calls) == len(straight.calls)
    assert not any("try something else" in str(c.then_user) for c in branched.calls)
    assert any("branches" in n for n in branched.notes)


def test_a_codex_exec_json_log_replays_on_estimates_and_says_why(tmp_path, capsys):
    from minimal_runtime.__main__ import main
    path = write_codex(tmp_path)
    (run,) = load(path)
    assert run.source == "codex" and len(run.calls) >= 6 and all(c.usage is None for c in run.calls)
    assert any("usage per turn" in n for n in run.notes)
    main(["replay", str(path), "--model", "claude-sonnet-4-6", "--strategy", "recorded", "--plot", "none"])
    assert "usage per turn, not per call" in capsys.readouterr().out


def test_aiders_markdown_history_is_refused_by_name(tmp_path):
    path = tmp_path / ".aider.chat.history.md"
    path.write_text("\n# aider chat started at 2026-12-01 09:00:00\n\n#### fix the bug\n\nI will edit a.py.\n")
    with pytest.raises(TrajectoryError, match="Aider's Markdown chat history .* no usage and no call boundaries"):
        load(path)
