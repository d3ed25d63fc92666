"""DeepSeek runs (mini-swe-agent logs) priced as DeepSeek priced them, by each call's date and hour
(replay/deepseek.py); the fixture is the project's own mini-swe-agent sample, its times rewritten here."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import pytest

from minimal_runtime.replay import load, replay, rows
from minimal_runtime.replay.deepseek import rates
from minimal_runtime.replay.samples import write_samples


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return json.loads(write_samples(tmp_path_factory.mktemp("samples"))["mini-swe-agent"].read_text())


def dated(sample, tmp_path, start: float | None, model: str = "deepseek-chat"):
    """The sample with its calls made from ``start`` on, a minute apart (None: no times), as ``model``."""
    data = json.loads(json.dumps(sample))
    assistants = [m for m in data["messages"] if m["role"] == "assistant"]
    for k, m in enumerate(assistants):
        response = m["extra"]["response"]
        response["model"] = model
        if start is None:
            response.pop("created")
        else:
            response["created"] = int(start + 60 * k)
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(data))
    (run,) = load(path)
    return run


def by_hand(run, hit, miss, output):
    u = [c.usage for c in run.calls]
    return (sum(x.cache_read for x in u) * hit + sum(x.prompt_tokens - x.cache_read for x in u) * miss
            + sum(x.output_tokens for x in u) * output) / 1e6


def test_the_lists_change_on_their_dates_and_at_night():
    assert rates("deepseek-chat", at("2025-03-03T10:00")).output == 1.10
    assert rates("deepseek-reasoner", at("2025-03-03T10:00")).output == 2.19
    assert (rates("deepseek-reasoner", at("2025-03-03T17:00")).miss, rates("deepseek-chat", at("2025-03-04T00:10")).miss) \
        == (0.135, 0.135)  # 16:30 to 00:30 UTC, both models
    assert rates("deepseek-chat", at("2025-09-05T15:59")).miss == 0.27
    assert rates("deepseek-chat", at("2025-09-05T17:00")).miss == 0.56  # the night discount ended with it
    assert (rates("deepseek/deepseek-chat", at("2026-04-13T07:42")).hit, rates("deepseek-chat", at("2026-05-01")).hit) \
        == (0.028, 0.0028)
    assert rates("claude-sonnet-4-6", at("2026-04-13T07:42")) is None


def test_a_run_is_priced_at_the_list_of_its_day(sample, tmp_path):
    run = dated(sample, tmp_path, at("2026-04-13T07:42"))
    bill = by_hand(run, 0.028, 0.28, 0.42)
    log_row, recorded = rows(run, [replay(run, "recorded")])
    assert log_row["cost"] == pytest.approx(bill, rel=1e-9)
    assert not math.isnan(recorded["cost"]) and recorded["cost"] > 0
    notes = replay(run, "tail").notes
    assert any("the list of 2025-09-29 (DeepSeek-V3.2): 14 calls" in n for n in notes)


def test_calls_at_night_are_billed_at_the_night_discount(sample, tmp_path):
    day = dated(sample, tmp_path, at("2025-03-03T10:00"))
    night = dated(sample, tmp_path, at("2025-03-03T17:00"))
    assert rows(day, [])[0]["cost"] == pytest.approx(by_hand(day, 0.07, 0.27, 1.10), rel=1e-9)
    assert rows(night, [])[0]["cost"] == pytest.approx(by_hand(night, 0.035, 0.135, 0.55), rel=1e-9)
    assert any("at night: 14 calls" in n for n in replay(night, "tail").notes)


def test_an_undated_run_says_which_list_priced_it(sample, tmp_path):
    run = dated(sample, tmp_path, None, model="deepseek-reasoner")
    replayed = replay(run, "tail")
    assert not math.isnan(replayed.cost)
    assert any("the list of 2026-04-26" in n and "no time" in n for n in replayed.notes)


def test_the_command_no_longer_calls_deepseek_unpriced(sample, tmp_path, capsys):
    from minimal_runtime.__main__ import main
    dated(sample, tmp_path, at("2026-04-13T07:42"))
    main(["replay", str(tmp_path / "run.traj.json"), "--strategy", "tail", "--plot", "none"])
    out, err = capsys.readouterr()
    assert "not in the price table" not in err and "priced as DeepSeek priced it" in out
    assert "nan" not in out.split("the log itself")[1].splitlines()[0]


def test_replaying_a_deepseek_run_warns_of_no_unknown_cost(sample, tmp_path, monkeypatch):
    """The model table's warning says an unknown model's "cost unknown": false for a priced DeepSeek run."""
    import warnings
    from minimal_runtime.provider import models
    monkeypatch.setattr(models, "_warned", set())  # the warning is given once per name a process
    run = dated(sample, tmp_path, at("2026-04-13T07:42"))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert not math.isnan(replay(run, "tail").cost)
    assert [str(w.message) for w in seen if issubclass(w.category, models.UnknownModelWarning)] == []
