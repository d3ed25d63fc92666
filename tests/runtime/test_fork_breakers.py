"""What a forking engineer hit first (issue 26): each test here failed on the runtime before its fix."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from minimal_runtime.core.agent import Agent
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import dumps, tool_result_block, tool_uses
from minimal_runtime.core.store import MemoryStore, RunStore
from minimal_runtime.core.tools import FunctionTool
from minimal_runtime.emulator import Emulator, ScriptedPolicy, tool_use
from minimal_runtime.emulator.policies import Turn
from minimal_runtime.features.budget import MaxStepsWarning

CURRENT, LEGACY = "claude-sonnet-5-5", "claude-sonnet-4-6"


class Page(BaseModel):
    n: int = 0
    note: str = ""


def agent_on(policy, model: str = CURRENT, ran: list | None = None, **kwargs) -> tuple[Agent, Emulator]:
    emu = Emulator(model=model, policy=policy)
    ran = ran if ran is not None else []
    tool = FunctionTool("read_page", "Read a page.", Page, lambda a: ran.append(a.n) or f"page {a.n}")
    return Agent(emu.client(max_retries=0), model=model, system="You read pages.", tools=[tool], **kwargs), emu


# 1. stop_reason ------------------------------------------------------------------------------------

def test_a_reply_cut_at_max_tokens_is_truncated_its_tool_call_never_runs_and_a_larger_cap_goes_on(tmp_path):
    ran: list[int] = []
    cut = [{"type": "text", "text": "I will read the page. " * 20}, tool_use("read_page", {"n": 1, "note": "x" * 400})]
    agent, _ = agent_on(ScriptedPolicy([cut, cut, "All read."]), ran=ran, max_tokens=60, store=RunStore(tmp_path / "r"))
    result = agent.run("Read page 1.")
    assert result.status == "truncated" and "max_tokens (60)" in result.error and "call run()" in result.error
    assert ran == [] and [m["role"] for m in agent.messages] == ["user"] and len(agent.calls) == 1
    agent.configure(max_tokens=4096)  # what the status says to do: a larger cap, and run() again
    assert agent.run().status == "done" and ran == [1]
    agent.store.close()
    saved = RunStore(tmp_path / "r").load()
    assert dumps(saved.messages) == dumps(agent.messages) and len(saved.calls) == 3 and saved.status == "done"


def test_a_refusal_is_reported_as_refused():
    agent, _ = agent_on(ScriptedPolicy([Turn(content=[{"type": "text", "text": "I can't help."}], stop_reason="refusal")]))
    result = agent.run("Do the thing.")
    assert result.status == "refused" and result.final_text == "I can't help." and "refusal" in result.error
    assert [m["role"] for m in agent.messages] == ["user"]


# 2. a current model's own max output, and client-side errors ---------------------------------------

def test_a_current_models_max_output_streams_instead_of_crashing():
    agent, emu = agent_on(ScriptedPolicy([[tool_use("read_page", {"n": 2})], "Done."]), max_tokens=128_000)
    result = agent.run("Read page 2.")
    assert result.status == "done" and result.final_text == "Done." and len(emu.calls) == 2
    assert tool_uses(agent.messages[1])[0]["input"] == {"n": 2}  # the streamed tool call, whole


def test_a_client_side_error_ends_the_run_cleanly_and_loses_no_batch(tmp_path):
    agent, _ = agent_on(ScriptedPolicy(["Done."]), store=RunStore(tmp_path / "r"))
    agent.hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", "PLAN") if not e.agent.calls else None)
    create = agent.client.beta.messages.create

    def refuse(**kwargs):
        raise ValueError("the client refused to send this")
    agent.client.beta.messages.create = refuse
    result = agent.run("Read.")
    assert result.status == "error" and "ValueError: the client refused" in result.error
    assert [m["role"] for m in agent.messages] == ["user"]
    agent.client.beta.messages.create = create
    assert agent.run().status == "done"
    assert dumps(agent.last_request).count("PLAN") == 1  # the unsent note, or the hook's fresh one: once


# 3. string content ------------------------------------------------------------------------------------

@pytest.mark.parametrize("model", [CURRENT, LEGACY])
def test_string_content_in_the_history_is_sent_as_the_api_takes_it(model):
    agent, _ = agent_on(ScriptedPolicy(["Carrying on."]), model=model)
    agent.hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", "phase 2"))
    agent.replace_history([{"role": "user", "content": "summary of the work so far"}])
    assert agent.run().status == "done"
    sent = agent.last_request["messages"]
    assert sent[0]["content"][0]["text"] == "summary of the work so far"
    assert sent[0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert agent.messages[0] == {"role": "user", "content": "summary of the work so far"}  # the history untouched


# 6. tool output: size and type ------------------------------------------------------------------------

def test_a_huge_tool_output_is_cut_with_a_note_and_the_store_keeps_it_whole(tmp_path):
    huge = "line of output\n" * 30_000  # 450,000 characters
    emu = Emulator(model=CURRENT, policy=ScriptedPolicy([[tool_use("dump", {})], "Done."]))
    dump = FunctionTool("dump", "Dump.", Page, lambda a: huge)
    agent = Agent(emu.client(max_retries=0), model=CURRENT, tools=[dump], store=RunStore(tmp_path / "r"))
    assert agent.run("Dump it.").status == "done"
    kept = agent.messages[2]["content"][0]["content"]
    assert kept.startswith(huge[:1000]) and len(kept) < 100_000 + 300
    assert "output cut: 450,000 characters, the first 100,000 shown" in kept
    agent.store.close()
    assert next(iter(RunStore(tmp_path / "r").load().tool_outputs.values())) == huge


class Odd:
    """A custom tool (the Tool protocol, not a FunctionTool) whose output content is not text."""

    name, description = "odd", "Returns an odd value."

    def __init__(self, content):
        self.content = content

    def definition(self):
        return {"name": self.name, "description": self.description, "input_schema": {"type": "object"}}

    def run(self, raw_input):
        return SimpleNamespace(content=self.content, is_error=False)


@pytest.mark.parametrize("content", [42, b"raw bytes", None, {"a": 1}])
def test_tool_content_of_the_wrong_type_becomes_an_error_result(content):
    emu = Emulator(model=CURRENT, policy=ScriptedPolicy([[tool_use("odd", {})], "Done."]))
    agent = Agent(emu.client(max_retries=0), model=CURRENT, tools=[Odd(content)])
    result = agent.run("Call odd.")
    assert result.status == "done"
    assert agent.messages[2]["content"][0] == tool_result_block(
        tool_uses(agent.messages[1])[0]["id"], f"odd returned {type(content).__name__} content, not text", True)


def test_a_function_tool_that_returns_no_text_is_an_error_result():
    emu = Emulator(model=CURRENT, policy=ScriptedPolicy([[tool_use("nothing", {})], "Done."]))
    tool = FunctionTool("nothing", "Forgets to return.", Page, lambda a: None)
    agent = Agent(emu.client(max_retries=0), model=CURRENT, tools=[tool])
    assert agent.run("Go.").status == "done"
    assert agent.messages[2]["content"][0]["content"] == "nothing returned NoneType, not text"


# 4. the current run's step count ----------------------------------------------------------------------

def test_a_hook_sees_the_current_runs_steps_and_the_step_warning_fires_on_every_run():
    reads = [[tool_use("read_page", {"n": k})] for k in range(6)]
    agent, _ = agent_on(ScriptedPolicy(reads), max_steps=3)
    seen: list[tuple[int, int]] = []
    agent.hooks.register(Point.PRE_LLM_CALL, lambda e: seen.append((e.agent.steps, e.agent.max_steps)))
    warning = MaxStepsWarning(margin=1)
    warning.install(agent.hooks)
    assert agent.run("Read pages 0 to 2.").status == "max_steps"
    assert warning.warned_at == 3
    assert agent.run("Read pages 3 to 5.").status == "max_steps"
    assert seen == [(0, 3), (1, 3), (2, 3)] * 2 and warning.warned_at == 6
    assert agent.hooks.failures == []


def test_resuming_a_finished_run_finishes_it_again():
    agent, _ = agent_on(ScriptedPolicy(["Done."]))
    finished: list[int] = []
    agent.hooks.register(Point.END, lambda e: finished.append(len(e.agent.calls)))
    agent.run("Go.")
    result = agent.run()
    assert result.status == "done" and result.final_text == "Done." and finished == [1, 1]
    assert agent.store.load().status == "done"


# 7. course vocabulary out of core ----------------------------------------------------------------------

def test_a_production_hook_raising_not_implemented_is_isolated_like_any_other(monkeypatch):
    monkeypatch.setattr(HookRegistry, "reraised", ())  # a fork of core/ alone: no course policy

    def unsupported(event):
        raise NotImplementedError("this backend has no token counter")
    agent, _ = agent_on(ScriptedPolicy(["Done."]))
    agent.hooks.register(Point.PRE_LLM_CALL, unsupported)
    assert agent.run("Go.").status == "done"
    assert [f.hook for f in agent.hooks.failures] == ["unsupported"]


# the loop's parts: a typed plan, one tool offer, a store of two methods -----------------------------

def test_a_store_of_two_methods_runs_and_resumes_a_run_and_its_events_carry_no_flags():
    class ListStore:  # a new backend: write and events, nothing else
        def __init__(self):
            self.log: list[dict] = []

        def write(self, event: dict, sync: bool = True) -> None:
            self.log.append(dumps(event))

        def events(self) -> list[dict]:
            import json
            return [json.loads(line) for line in self.log]
    store = ListStore()
    agent, _ = agent_on(ScriptedPolicy([[tool_use("read_page", {"n": 1})], "Read."]), store=store)
    assert agent.run("Read page 1.").status == "done"
    again, _ = agent_on(ScriptedPolicy(["unused"]), store=store)
    assert again.messages == agent.messages and again.calls == agent.calls and again.steps == 2
    kinds = [e["type"] for e in store.events()]
    assert kinds[:2] == ["start", "task"] and "turn" in kinds and kinds[-1] == "status"
    assert not any("start" in e or "steered" in e for e in store.events())


def test_tool_availability_is_one_offer_that_announces_masking_and_survives_a_resume():
    store = MemoryStore()
    masked_after_first = [tool_use("read_page", {"n": 1})]

    def policy(request):
        if not any(m["role"] == "assistant" for m in request["messages"]):
            return Turn.of(masked_after_first)
        return Turn.of("Done.")
    agent, _ = agent_on(policy, store=store)
    agent.hooks.register(Point.POST_TOOL_CALL, lambda e: e.agent.toolbox.mask("read_page"))
    assert agent.offer.changes() == []  # nothing to announce before anything is masked
    assert agent.run("Read page 1.").status == "done"
    removal = {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "read_page"}}
    assert {"role": "system", "content": [removal]} in agent.messages and agent.offer.offered == set()
    assert agent.offer.changes() == []  # announced once, with the turn that carried it
    resumed, _ = agent_on(ScriptedPolicy(["unused"]), store=store)
    resumed.toolbox.mask("read_page")
    assert resumed.offer.offered == set() and resumed.offer.changes() == []
    resumed.toolbox.unmask("read_page")
    assert resumed.offer.changes() == [{**removal, "type": "tool_addition"}]


def test_the_layout_says_what_the_call_sends_and_what_the_history_keeps():
    from minimal_runtime.core.context import CallPlan
    plans = []
    agent, emu = agent_on(ScriptedPolicy([[tool_use("read_page", {"n": 1})], "Read."]))
    layout = agent.layout
    agent.layout = lambda parts: plans.append(layout(parts)) or plans[-1]
    agent.hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", "I read page 1."))
    assert agent.run("Read page 1.").status == "done"
    assert all(isinstance(p, CallPlan) and p.betas for p in plans)  # a current model: the beta endpoint
    assert [m for m in agent.messages if m["role"] == "system"] == [e for p in plans for e in p.entries]
    assert all("betas" not in p.request for p in plans) and agent.last_request["betas"] == plans[-1].betas  # as sent
