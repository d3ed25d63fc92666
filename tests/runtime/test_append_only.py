"""Append-only context: the layout each model calls for keeps every request an extension of the last,
so preserved thinking never fails; the 2025 layout on a current model fails as documented."""

from __future__ import annotations

import re
import tempfile
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minimal_runtime.core.context import first_edit, layout_for, tail_layout, threaded_layout, turn_scoped_layout
from minimal_runtime.core.hooks import HookRegistry, Point
from minimal_runtime.core.messages import dumps
from minimal_runtime.emulator.models import emulated
from minimal_runtime.emulator.prompt import Render, flatten
from minimal_runtime.provider.models import MODELS, model_spec
from tests.support import TASK, long_agent, pricing_agent, progress_hooks

CURRENT = [m for m, s in MODELS.items() if s.status == "current"]


def what_a_run_reads(model: str) -> tuple:
    """Everything a run reads of a model's entries (the provider's table and the emulator's): the
    name, the prices and the release date aside, which change the bill and the models listing but
    not one request or one cache read."""
    spec = emulated(model_spec(model))
    return tuple(sorted(spec.model_dump(exclude={"id", "prices", "released", "status"}).items()))


FIRST_OF_ITS_KIND = {next(m for m in CURRENT if what_a_run_reads(m) == what_a_run_reads(model)) for model in CURRENT}


def recording(hooks: HookRegistry) -> list[dict]:
    sent: list[dict] = []
    hooks.register(Point.POST_LLM_CALL, lambda e: sent.append(e.request))
    return sent


def read_limit(model: str, requests: list[dict]) -> list[int]:
    """Per call, the tokens a cache could have served at best: the longest rendered prefix this
    request shares with the previous one (which wrote it), zero for the first. Each request is
    flattened reusing the previous one's rendering up to the messages both share (and no further than
    its last user message: a turn-scoped entry after it is cleared now), as the emulator does."""
    limits, previous, before, previous_last_user = [0], None, None, 0
    for request in requests:
        full = {"model": model, **{k: v for k, v in request.items() if k != "betas"}}
        last_user = max(i for i, m in enumerate(full["messages"]) if m["role"] == "user")
        reuse = None
        if previous is not None:
            shared = next((i for i, (a, b) in enumerate(zip(before["messages"], full["messages"])) if a != b),
                          min(len(before["messages"]), len(full["messages"])))
            reuse = (previous, min(shared, previous_last_user + 1))
        prompt = flatten(full, reuse=reuse, render=Render(last_user=last_user))
        if previous is not None:
            same = 0
            for a, b in zip(previous.digests, prompt.digests):
                if a != b:
                    break
                same += 1
            limits.append(prompt.prefix_tokens(same - 1))
        previous, before, previous_last_user = prompt, full, last_user
    return limits


def test_the_current_models_fall_into_a_few_kinds_of_run():
    assert 1 < len(FIRST_OF_ITS_KIND) < len(CURRENT)  # else the next test runs 300 calls on each


@pytest.mark.parametrize("model", CURRENT)
def test_every_current_model_is_append_only_and_reads_what_it_can_300_calls_on_each_kind(model, tmp_path):
    """300 calls on the first model of each kind; the others, whose entries read by a run are the
    same, 60 calls each, so that a mistake in what_a_run_reads still fails here."""
    calls = 300 if model in FIRST_OF_ITS_KIND else 60
    hooks = progress_hooks()
    sent = recording(hooks)
    agent, _ = long_agent(tmp_path, calls - 1, model=model, hooks=hooks, check_append_only=True)
    result = agent.run("Read the reference pages, one at a time, and keep notes.")
    assert result.status == "done", result.error  # no prefix-check failure anywhere
    assert len(agent.calls) == calls
    assert agent.layout is (threaded_layout if model_spec(model).threads else turn_scoped_layout)
    assert agent.edits == []  # the agent compared every request with the one before it
    read = sum(c.cache_read_input_tokens for c in agent.calls)
    limit = sum(read_limit(model, sent))
    assert read >= 0.99 * limit, (read, limit)
    thinking = [b for m in agent.messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "thinking"]
    assert len(thinking) == calls and all(b["signature"] for b in thinking)  # kept exactly as returned


def test_the_2025_layout_on_a_current_model_fails_on_the_first_call_that_sends_thinking_back(tmp_path):
    agent, _, _ = pricing_agent(tmp_path, model="claude-sonnet-5-5", hooks=progress_hooks(), layout=tail_layout)
    result = agent.run(TASK)
    assert result.status == "error" and len(agent.calls) == 1
    assert result.error.startswith("BadRequestError 400: messages.1.content.0: Invalid `signature` in `thinking` block. "
                                   "The block is bound to a different conversation.")
    assert len(agent.messages) == 3  # the history is intact: the task and the first complete turn


def test_the_layout_follows_the_model_and_says_why():
    assert layout_for(model_spec("claude-sonnet-5-5"))[0] is threaded_layout
    assert layout_for(model_spec("claude-fable-5-2"))[0] is turn_scoped_layout  # no threads [MT]
    assert layout_for(model_spec("claude-haiku-4-5"))[0] is tail_layout
    assert "does not accept mid-conversation system messages" in layout_for(model_spec("claude-sonnet-5"))[1]
    # a name never looked up before in this process (the warning comes once per name, and a runner
    # such as mutmut runs the suite twice in one process)
    with pytest.warns(UserWarning):
        assert layout_for(model_spec(f"a-local-model-{uuid.uuid4().hex}"))[0] is tail_layout


def test_masking_on_a_current_model_changes_tools_in_place(tmp_path):
    """Tool availability by tool_removal / tool_addition in a plain system message; `tools` never
    changes; a tool masked from the start is deferred; the toolbox still refuses a masked call."""
    from minimal_runtime.core.agent import Agent
    from minimal_runtime.core.tools import ToolBox
    from minimal_runtime.emulator import Emulator
    from minimal_runtime.example import SYSTEM, SimulatedResearcher, Workspace, pricing_tools

    def phases(event):
        if len(event.agent.calls) == 3:
            event.agent.toolbox.unmask("browse")
        if len(event.agent.calls) == 12:
            event.agent.toolbox.mask("fetch")
    hooks = HookRegistry()
    hooks.register(Point.PRE_LLM_CALL, phases)
    sent = recording(hooks)
    box = ToolBox(pricing_tools(Workspace(tmp_path), []))
    box.mask("browse")
    emu = Emulator(model="claude-sonnet-5-5", policy=SimulatedResearcher())
    agent = Agent(emu.client(), model="claude-sonnet-5-5", system=SYSTEM, toolbox=box, hooks=hooks, check_append_only=True)
    assert agent.run(TASK).status == "done"
    assert all(r["tools"] == sent[0]["tools"] for r in sent)
    assert [t.get("defer_loading") for t in sent[0]["tools"] if t["name"] == "browse"] == [True]
    changes = [b for m in agent.messages if m["role"] == "system" and "clear_at" not in m for b in m["content"]]
    assert [(b["type"], b["tool"]["name"]) for b in changes] == [("tool_addition", "browse"), ("tool_removal", "fetch")]
    assert agent.edits == []
    late = sum(c.cache_read_input_tokens for c in agent.calls[4:]) / sum(c.prompt_tokens for c in agent.calls[4:])
    assert late > 0.8  # the changes left the cache in place


def test_a_tool_masked_before_the_first_call_starts_deferred(tmp_path):
    from minimal_runtime.core.agent import Agent
    from minimal_runtime.core.tools import ToolBox
    from minimal_runtime.example import Workspace, pricing_tools
    from minimal_runtime.emulator import Emulator
    box = ToolBox(pricing_tools(Workspace(tmp_path), []))
    box.mask("browse")
    current = Agent(Emulator(model="claude-sonnet-5-5").client(), model="claude-sonnet-5-5", toolbox=box)
    older = Agent(Emulator(model="claude-sonnet-4-6").client(), model="claude-sonnet-4-6", toolbox=box)
    assert [d.get("defer_loading") for d in current.tool_definitions if d["name"] == "browse"] == [True]
    assert all("defer_loading" not in d for d in older.tool_definitions)


def test_a_forced_tool_choice_is_refused_where_the_model_rejects_it(tmp_path):
    with pytest.raises(ValueError, match="rejects a forced tool_choice"):
        pricing_agent(tmp_path, model="claude-sonnet-5-5", tool_choice={"type": "any"})


def test_the_append_only_check_names_the_first_edit():
    base = {"system": [{"type": "text", "text": "s"}], "tools": [{"name": "a"}],
            "messages": [{"role": "user", "content": "task"},
                         {"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": "x"},
                                                           {"type": "text", "text": "ok"}]},
                         {"role": "user", "content": [{"type": "text", "text": "more"}]}]}
    grown = {**base, "messages": [*base["messages"], {"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]}
    assert first_edit(base, grown) is None
    marked = {**grown, "messages": [{"role": "user", "content": [{"type": "text", "text": "task", "cache_control": {"type": "ephemeral"}}]},
                                    *grown["messages"][1:]]}
    assert first_edit(base, marked) is None  # cache_control and string-vs-block are not edits
    assert first_edit(base, {**grown, "system": "other"}) == "system: changed since the previous request"
    assert first_edit(base, {**grown, "tools": [{"name": "a"}, {"name": "b", "defer_loading": True}]}) is None
    assert first_edit(base, {**grown, "tools": [{"name": "a"}, {"name": "b"}]}) == "tools: changed since the previous request"
    edited = {**grown, "messages": [*grown["messages"][:2], {"role": "user", "content": "less"}, *grown["messages"][3:]]}
    assert first_edit(base, edited).startswith("messages.2: edited")
    assert first_edit(grown, base).startswith("messages: 2 message(s)")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(["plan", "budget", "memory", "policy"]), max_size=3), min_size=100, max_size=100),
       st.sampled_from(["claude-haiku-5-5", "claude-sonnet-5-5", "claude-sonnet-4-6"]))
def test_random_hook_plans_stay_append_only_and_batches_stay_in_their_call(plans, model):
    """Over 100 turns with random hook plans: on the current models every request is append-only,
    the model reads each batch on its own call only (what the emulator rendered to the policy), and
    every batch is on the wire history; on the 2025 layout no batch text enters the durable history."""
    with tempfile.TemporaryDirectory() as tmp:
        hooks = HookRegistry()

        def inject(event):
            for source in plans[len(event.agent.calls) % len(plans)]:
                event.agent.inject_turn_scoped(source, f"BATCH-{len(event.agent.calls)}-{source}")
        hooks.register(Point.PRE_LLM_CALL, inject)
        sent = recording(hooks)
        seen: list[str] = []
        from minimal_runtime.example.policy import LongRunPolicy
        policy = LongRunPolicy(99)

        def watching(request):
            seen.append(dumps(request["messages"]))
            return policy(request)
        agent, _, _ = pricing_agent(Path(tmp), model=model, hooks=hooks, policy=watching, check_append_only=True,
                                    max_steps=101)
        outcome = agent.run("Read the pages.")
        assert outcome.status == "done", outcome.error
        wire = dumps(agent.messages)
        for k, view in enumerate(seen):  # read on its own call, and never again
            assert set(re.findall(r"BATCH-\d+-\w+", view)) == {f"BATCH-{k}-{source}" for source in plans[k % len(plans)]}
        if model_spec(model).system_messages == "yes":
            assert agent.edits == [] and all(first_edit(a, b) is None for a, b in zip(sent, sent[1:]))
            assert all(f"BATCH-{k}-{s}" in wire for k in range(100) for s in plans[k % len(plans)])
        else:
            assert "BATCH-" not in wire
