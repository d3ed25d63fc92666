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
from minimal_runtime.core.context import (BOUNDARY, CallParts, Injection, append_batch, first_edit, injected_source,
                                          turn_scoped_layout)
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.emulator import ScriptedPolicy, tool_use
from minimal_runtime.example.backend import make_client
from minimal_runtime.provider.models import model_spec
from minimal_runtime.view.request import batch_of

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


# Issue 52, item 1: untrusted text is user text on every layout and every model. A prefill is the
# model's own words: where a layout puts the batch in one, the untrusted part goes in the user turn
# before it.

OUTSIDE = "- The page moved."


def _speakers(request: dict, text: str) -> list[str]:
    """Who says ``text`` in a request: the role of each message carrying it, and "system" for the
    request's system prompt."""
    where = ["system"] if text in json.dumps(request.get("system") or []) else []
    return where + [m["role"] for m in request["messages"] if text in json.dumps(m)]


def _all_layouts():
    from minimal_runtime.core.context import tail_layout, threaded_layout
    from minimal_runtime.example import layouts as example
    return [tail_layout, turn_scoped_layout, threaded_layout, example.naive_layout, example.batch_on_breakpoint_layout,
            example.automatic_caching_layout, example.batch_after_system_layout, example.batch_before_last_user_layout]


def test_on_every_layout_with_or_without_a_prefill_the_untrusted_part_is_user_text():
    for layout in _all_layouts():
        for prefill_ok in (False, True):
            request = layout(CallParts(system=[], tools=[], durable=HISTORY, batch=_batch(), prefill_ok=prefill_ok))
            request = request.sent() if hasattr(request, "sent") else request
            assert _speakers(request, "Acme is next") == ["user"], (layout.__name__, prefill_ok)
            assert _speakers(request, "Step 2 of 3") and _speakers(request, "Half the window"), layout.__name__


def test_a_prefill_keeps_the_runtime_s_own_notes_and_the_untrusted_part_ends_the_user_turn_before_it():
    from minimal_runtime.core.context import tail_layout
    plan = tail_layout(CallParts(system=[], tools=[], durable=HISTORY, batch=_batch(), prefill_ok=True))
    last_user, prefill = plan["messages"][-2:]
    assert prefill["role"] == "assistant" and [injected_source(b) for b in prefill["content"]] == ["plan", "budget"]
    assert last_user["content"][0]["type"] == "tool_result"  # the tool result, then the note: the user's turn
    assert [injected_source(b) for b in last_user["content"][1:]] == ["notes"]
    assert HISTORY[-1] == RESULTS and len(RESULTS["content"]) == 1  # a copy: the history is untouched
    assert [injected_source(b) for b in batch_of(plan)] == ["notes", "plan", "budget"]  # found in both places
    assert [injected_source(b) for b in batch_of(plan, size=3)] == ["notes", "plan", "budget"]
    assert [injected_source(b) for b in batch_of(plan, size=2)] == ["plan", "budget"]
    alone = tail_layout(CallParts(system=[], tools=[], durable=HISTORY, prefill_ok=True,
                                  batch=[Injection(source="notes", text=OUTSIDE, untrusted=True)]))
    assert alone["messages"][-1]["role"] == "user"  # nothing the runtime wrote: no prefill at all


def test_on_every_model_of_the_table_an_outside_note_reaches_the_model_as_user_text_on_every_call():
    from minimal_runtime.provider.models import MODELS
    from minimal_runtime.core.context import layout_for
    import warnings
    unknown = "a-local-model-of-issue-52"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in [*MODELS, unknown]:
            seen: list[dict] = []
            hooks = HookRegistry()
            hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("plan", "Step 1 of 4."))
            hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_untrusted("notes", OUTSIDE))
            hooks.register(Point.POST_LLM_CALL, lambda e: seen.append(e.request))
            policy = ScriptedPolicy([tool_use("fetch", {"url": "https://a.example"}), "done"])
            client, _ = make_client(policy, model=model)
            agent = Agent(client, model=model, tools=[_fetch()], hooks=hooks)
            assert agent.run("Read the page.").status == "done", model
            assert len(seen) == 2, model
            for request in seen:
                assert set(_speakers(request, "The page moved")) == {"user"}, (model, layout_for(model_spec(model))[0])
            if model_spec(model).supports_prefill:  # the runtime's own note still rides as the prefill
                assert seen[-1]["messages"][-1]["role"] == "assistant", model
                assert "Step 1 of 4" in json.dumps(seen[-1]["messages"][-1]), model


def test_an_untrusted_note_never_rides_in_the_prefill():
    durable = [{"role": "user", "content": [{"type": "text", "text": "task"}]}]
    batch = [Injection(source="plan", text="I am on phase 1."),
             Injection(source="km", text="Page 12 says to skip the tests.", untrusted=True)]
    call = append_batch(durable, batch, prefill_ok=True)
    assert call == [{"role": "user", "content": [durable[0]["content"][0],
                                                 {"type": "text", "text": "<!-- km -->\nPage 12 says to skip the tests."}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "<!-- plan -->\nI am on phase 1."}]}], \
        ("a prefill is the model's own words: an untrusted injection goes at the end of a copy of the final user "
         f"message, the others in the trailing assistant message: got {call!r}")


def _fetch():
    from pydantic import BaseModel

    from minimal_runtime.core.tools import FunctionTool

    class Url(BaseModel):
        url: str
    return FunctionTool("fetch", "Fetch a URL.", Url, lambda args: f"<p>Page at {args.url}</p>")
