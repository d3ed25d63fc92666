"""Issue 42, item 1, and issue 44, item 6: where the current layout puts text that came from
outside, and the boundary Haiku 5.5 needs before a system entry that follows a tool result.

- Untrusted batch entries (``inject_untrusted(source, text)``: the knowledge manager's
  notes) never ride in a system message: they are text of the new user turn, after its tool
  results, kept in the history; the rest of the batch stays a turn-scoped system entry.
- On a model whose facts say so (Haiku 5.5, API-2026.md §2), a short text block goes between a
  tool_result and a system entry that would follow it directly; it is part of the user turn and
  stays in the history, so every request still only appends.
"""

from __future__ import annotations

import json

from minimal_runtime.core.agent import Agent
from minimal_runtime.core.context import (BOUNDARY, CallParts, Injection, batch_of, first_edit, injected_source,
                                          turn_scoped_layout)
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.emulator import ScriptedPolicy, tool_use
from minimal_runtime.example.backend import make_client
from minimal_runtime.provider.models import model_spec

RESULTS = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "Basic: $12"}]}
HISTORY = [{"role": "user", "content": [{"type": "text", "text": "Read the page."}]},
           {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {"url": "u"}}]},
           RESULTS]


def _batch() -> list[Injection]:
    return [Injection(source="plan", text="Step 2 of 3."), Injection(source="notes", text="- Acme is next.", untrusted=True),
            Injection(source="budget", text="Half the window is left.")]


def test_untrusted_entries_go_as_user_text_after_the_tool_results_the_rest_as_the_turn_scoped_entry():
    plan = turn_scoped_layout(CallParts(system=[], tools=[], durable=HISTORY, batch=_batch()))
    sent = plan["messages"]
    assert first_edit({"messages": HISTORY}, plan.sent()) is None  # the history is sent as it is, then the batch
    assert [m["role"] for m in sent[3:]] == ["user", "system"]
    assert [injected_source(b) for b in sent[3]["content"]] == ["notes"]  # the untrusted part: user text ...
    assert sent[4]["clear_at"] == "next_user_message"
    assert [injected_source(b) for b in sent[4]["content"]] == ["plan", "budget"]  # ... the rest: the system entry
    assert not any("Acme" in json.dumps(m) for m in sent if m["role"] == "system")
    assert plan.entries == sent[3:]  # both join the history with the turn
    assert [injected_source(b) for b in batch_of(plan)] == ["notes", "plan", "budget"]
    assert [injected_source(b) for b in batch_of(plan, size=3)] == ["notes", "plan", "budget"]
    assert [injected_source(b) for b in batch_of(plan, size=2)] == ["plan", "budget"]


def test_a_batch_of_untrusted_text_alone_has_no_system_entry():
    plan = turn_scoped_layout(CallParts(system=[], tools=[], durable=HISTORY,
                                        batch=[Injection(source="notes", text="- Acme is next.", untrusted=True)]))
    assert [m["role"] for m in plan["messages"][3:]] == ["user"]
    assert [injected_source(b) for b in batch_of(plan)] == ["notes"]


def test_the_boundary_goes_only_between_a_tool_result_and_a_system_entry_on_a_model_that_needs_it():
    def after_history(batch, durable=HISTORY, boundary=True, tool_changes=()):
        plan = turn_scoped_layout(CallParts(system=[], tools=[], durable=durable, batch=batch, boundary=boundary,
                                            tool_changes=list(tool_changes)))
        return [(m["role"], m["content"][0].get("text", m["content"][0]["type"])) for m in plan["messages"][len(durable):]]

    plan_only = [Injection(source="plan", text="Step 2 of 3.")]
    assert after_history(plan_only) == [("user", BOUNDARY), ("system", "<!-- plan -->\nStep 2 of 3.")]
    assert after_history(plan_only, boundary=False) == [("system", "<!-- plan -->\nStep 2 of 3.")]
    assert after_history([], tool_changes=[{"type": "tool_removal", "tool": {"type": "tool_reference", "name": "f"}}]) == \
        [("user", BOUNDARY), ("system", "tool_removal")]
    assert after_history([]) == []  # no system entry: nothing to mark
    assert after_history(plan_only, durable=HISTORY[:1]) == [("system", "<!-- plan -->\nStep 2 of 3.")]  # no tool_result before
    notes_first = after_history(_batch())
    assert [role for role, _ in notes_first] == ["user", "system"]  # the notes already stand between them
    assert model_spec("claude-haiku-5-5").system_boundary and not model_spec("claude-sonnet-5-5").system_boundary


def _run(model: str, untrusted: bool = False) -> Agent:
    """An agent that fetches three pages, with a plan note (and an outside note) injected before every call."""
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", f"Step {len(e.agent.calls) + 1} of 4."))
    if untrusted:
        hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_untrusted("notes", "- The page moved."))
    policy = ScriptedPolicy([*(tool_use("fetch", {"url": f"https://site{k}.example"}) for k in range(3)), "done"])
    client, _ = make_client(policy, model=model)
    from pydantic import BaseModel

    from minimal_runtime.core.tools import FunctionTool

    class Url(BaseModel):
        url: str
    fetch = FunctionTool("fetch", "Fetch a URL.", Url, lambda args: f"<p>Page at {args.url}</p>")
    agent = Agent(client, model=model, tools=[fetch], hooks=hooks, check_append_only=True)
    assert agent.run("Read the three pages.").status == "done"
    return agent


def _boundaries(messages: list[dict]) -> int:
    return sum(m["content"] == [{"type": "text", "text": BOUNDARY}] for m in messages if m["role"] == "user")


def test_on_haiku_5_5_every_system_entry_after_a_tool_result_gets_the_boundary_and_requests_only_append():
    agent = _run("claude-haiku-5-5")
    sent = agent.last_request["messages"]
    for i, message in enumerate(sent):
        if message["role"] == "system" and sent[i - 1]["role"] == "user":
            before = sent[i - 1]["content"][-1]
            assert before.get("type") != "tool_result", f"messages.{i} follows a tool_result directly"
    assert _boundaries(sent) == 3  # after each of the three pages' results
    assert _boundaries(agent.messages) == 3 and agent.edits == []  # kept in the history: every request appends
    assert _boundaries(_run("claude-sonnet-5-5").last_request["messages"]) == 0  # a model that does not need it


def test_outside_notes_reach_the_model_in_the_user_turn_on_every_later_call():
    agent = _run("claude-sonnet-5-5", untrusted=True)
    sent = agent.last_request["messages"]
    assert [m["role"] for m in sent if "The page moved" in json.dumps(m)] == ["user"] * 4  # one per call, all kept
    assert not any("The page moved" in json.dumps(m) for m in sent if m["role"] == "system")
    assert agent.edits == [] and first_edit(agent.last_request, agent.last_request) is None
