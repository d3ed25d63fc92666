"""``make experiment``: a chapter's deciding experiment on a real model, run end to end against ``serve``
standing in for the API (its SIMULATED default policy answers, through a plain ``anthropic.Anthropic``
built from the environment, as a learner's key would be used)."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.example import experiment
from minimal_runtime.serve import ToolThenAnswer, started


SMALL = {  # each chapter's experiment at a few calls a setting
    "04": {"phases": 2},
    "05": {"turns": 8, "page_chars": 2_000, "budget": 4_000},  # compacted after about five pages
    "07": {"turns": 8},
    "08": {"pages": 2, "per_phase": 1},
    "09": {"pages": 2},  # under the limit: no compaction, so no restorable share
    "11": {"pages": 3, "session_steps": 4},  # two sessions at least: one hand-over
}


@pytest.fixture(params=sorted(SMALL))
def small(request, monkeypatch, tmp_path):
    """A chapter's experiment at a small size, its figures written under tmp_path."""
    chapter = request.param
    monkeypatch.setattr(experiment, "WORKBOOK", tmp_path / "experiments")
    for option, value in SMALL[chapter].items():
        monkeypatch.setitem(experiment.EXPERIMENTS[chapter].options, option, value)
    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    return chapter, tmp_path / "experiments" / f"{chapter}.json"


def test_every_experiment_has_a_runner_and_a_small_size():
    assert set(experiment.EXPERIMENTS) == set(experiment.RUNNERS) == set(SMALL)


def test_without_a_key_it_says_what_it_would_cost_and_sends_nothing(small, monkeypatch):
    chapter, path = small
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    said = []
    assert experiment.main(chapter.lstrip("0"), cap=5.0, out=said.append) == 0
    assert "the estimate" in said[1] and "nothing was sent" in said[2] and not path.exists()
    assert "no real run yet" in experiment.shown(chapter)


def test_with_a_key_it_runs_each_setting_on_the_server_and_writes_the_figures_beside_the_simulated(small, monkeypatch):
    chapter, path = small
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "a-learners-key")
        said = []
        assert experiment.main(chapter, cap=5.0, out=said.append) == 0
    data = json.loads(path.read_text())
    assert set(data["real"]) == set(data["simulated"]) == set(experiment.EXPERIMENTS[chapter].settings)
    assert sum(f["calls"] for f in data["real"].values()) == len(emulator.calls) == len(front.lines) > 0
    assert data["spent"] == pytest.approx(sum(c.cost for c in emulator.calls)) and data["spent"] <= data["cap"]
    shows = experiment.EXPERIMENTS[chapter].shows
    assert all(set(shows) <= {*f["figures"], "calls", "cost"} for f in data["simulated"].values())
    table = experiment.shown(chapter)
    assert "real run of" in table and all(setting in table for setting in data["simulated"])
    assert all(len(line) <= 110 for line in table.splitlines())  # it prints in the chapter


def test_an_estimate_over_the_cap_sends_nothing(small, monkeypatch):
    chapter, path = small
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, _):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "a-learners-key")
        said = []
        assert experiment.main(chapter, cap=0.0001, out=said.append) == 2
    assert "over the cap" in said[-1] and emulator.calls == [] and not path.exists()


def test_a_chapter_without_an_experiment_says_which_have_one():
    said = []
    assert experiment.main("02", cap=1.0, out=said.append) == 2 and "08" in said[0]


def test_a_setting_that_ends_past_the_cap_outside_the_agents_limit_stops_the_next(monkeypatch, tmp_path):
    """A KM's calls (07) are outside the working agent's max_cost_usd: once a setting has spent the cap,
    the next is not started (it would get a limit of zero or less, which the runtime refuses)."""
    monkeypatch.setattr(experiment, "WORKBOOK", tmp_path / "experiments")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-learners-key")
    limits = []

    def runner(setting, *, online, **limit):
        limits.append(limit.get("max_cost_usd"))
        assert not online or limit["max_cost_usd"] > 0
        return experiment.RunFigures(status="done", calls=3, prompt_tokens=10, cost=0.6 if online else 0.1,
                                     figures={"longest unsaved": 6, "pages read": 3})
    monkeypatch.setitem(experiment.RUNNERS, "07", runner)
    said = []
    assert experiment.main("07", cap=0.5, out=said.append) == 0
    assert limits == [None, None, 0.5] and "the cap $0.5 is reached" in said[-2]
    data = json.loads((tmp_path / "experiments" / "07.json").read_text())
    assert list(data["real"]) == ["without the KM"] and data["spent"] == pytest.approx(0.6)
