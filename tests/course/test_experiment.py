"""``make experiment``: a chapter's deciding experiment on a real model, run end to end against ``serve``
standing in for the API (its SIMULATED default policy answers, through a plain ``anthropic.Anthropic``
built from the environment, as a learner's key would be used)."""

from __future__ import annotations

import json

import pytest

from minimal_runtime.emulator import Emulator
from minimal_runtime.example import experiment
from minimal_runtime.serve import ToolThenAnswer, started


@pytest.fixture
def small(monkeypatch, tmp_path):
    """The chapter's experiment at four pages, its figures written under tmp_path."""
    monkeypatch.setattr(experiment, "WORKBOOK", tmp_path / "experiments")
    monkeypatch.setitem(experiment.EXPERIMENTS["08"].options, "pages", 2)
    monkeypatch.setitem(experiment.EXPERIMENTS["08"].options, "per_phase", 1)
    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    return tmp_path / "experiments" / "08.json"


def test_without_a_key_it_says_what_it_would_cost_and_sends_nothing(small, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    said = []
    assert experiment.main("8", cap=5.0, out=said.append) == 0
    assert "the estimate" in said[1] and "nothing was sent" in said[2] and not small.exists()
    assert "no real run yet" in experiment.shown("08")


def test_with_a_key_it_runs_each_setting_on_the_server_and_writes_the_figures_beside_the_simulated(small, monkeypatch):
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, front):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "a-learners-key")
        said = []
        assert experiment.main("08", cap=5.0, out=said.append) == 0
    data = json.loads(small.read_text())
    assert set(data["real"]) == set(data["simulated"]) == {"none", "plan hook", "event recitation"}
    assert sum(f["calls"] for f in data["real"].values()) == len(emulator.calls) == len(front.lines) > 0
    assert data["spent"] == pytest.approx(sum(c.cost for c in emulator.calls)) and data["spent"] <= data["cap"]
    table = experiment.shown("08")
    assert "real run of" in table and all(setting in table for setting in data["simulated"])


def test_an_estimate_over_the_cap_sends_nothing(small, monkeypatch):
    emulator = Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer())
    with started(emulator) as (url, _):
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "a-learners-key")
        said = []
        assert experiment.main("08", cap=0.0001, out=said.append) == 2
    assert "over the cap" in said[-1] and emulator.calls == [] and not small.exists()


def test_a_chapter_without_an_experiment_says_which_have_one(small):
    said = []
    assert experiment.main("02", cap=1.0, out=said.append) == 2 and "08" in said[0]
