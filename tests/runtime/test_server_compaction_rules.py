"""The provider-side clearing and compaction rules, each stated by a test (issue 27: the
server_compaction module scored by mutation): the request fields and betas each feature adds, what
the client drops after a compaction block, and an on-demand summary that replaces the history
only when one came back."""

from __future__ import annotations

from types import SimpleNamespace

from minimal_runtime.core.context import CallParts
from minimal_runtime.core.hooks import CallEvent, HookEvent, HookRegistry, Point
from minimal_runtime.provider.models import COMPACT_ON_DEMAND_BETA, COMPACT_THRESHOLD_BETA, CONTEXT_EDITING_BETA
from minimal_runtime.features.server_compaction import (CONTINUE, OnDemandCompaction, ServerClearing,
                                                        ServerCompaction)


def inner(parts):
    return {"model": "m", "messages": list(parts.durable), "betas": ["already-on"]}


def bare(parts):
    return {"model": "m", "messages": list(parts.durable)}


PARTS = CallParts(system=[], tools=[], durable=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
BLOCK = {"role": "assistant", "content": [{"type": "compaction", "content": "summary"}]}


def text(role, t):
    return {"role": role, "content": [{"type": "text", "text": t}]}


def test_clearing_sends_its_edit_with_its_beta_after_the_betas_already_there():
    request = ServerClearing(trigger=5_000, keep=2).layout(inner)(PARTS)
    assert request["betas"] == ["already-on", CONTEXT_EDITING_BETA]
    assert request["context_management"] == {"edits": [{
        "type": "clear_tool_uses_20250919", "trigger": {"type": "input_tokens", "value": 5_000},
        "keep": {"type": "tool_uses", "value": 2}}]}
    assert ServerClearing().layout(bare)(PARTS)["betas"] == [CONTEXT_EDITING_BETA]


def test_clearing_defaults_and_clear_at_least_only_when_given():
    edit = ServerClearing().edit
    assert edit["trigger"]["value"] == 100_000 and edit["keep"]["value"] == 3 and "clear_at_least" not in edit
    assert ServerClearing(clear_at_least=20_000).edit["clear_at_least"] == {"type": "input_tokens", "value": 20_000}


def count(feature, response):
    feature.count(CallEvent(Point.POST_LLM_CALL, SimpleNamespace(), request={}, response=response, batch=[]))


def test_clearing_counts_what_the_server_cleared_per_call_and_zero_when_it_said_nothing():
    feature = ServerClearing()
    HookRegistry().install(feature)
    edits = [SimpleNamespace(cleared_tool_uses=2), SimpleNamespace(cleared_tool_uses=None), SimpleNamespace()]
    count(feature, SimpleNamespace(context_management=SimpleNamespace(applied_edits=edits)))
    count(feature, SimpleNamespace(context_management=None))
    count(feature, SimpleNamespace())
    count(feature, SimpleNamespace(context_management=SimpleNamespace(applied_edits=None)))
    assert feature.cleared == [2, 0, 0, 0]


def test_clearing_counts_after_each_call():
    feature, agent = ServerClearing(), SimpleNamespace()
    hooks = HookRegistry().install(feature)
    hooks.run(Point.POST_LLM_CALL, CallEvent(Point.POST_LLM_CALL, agent, request={}, batch=[], response=SimpleNamespace(
        context_management=SimpleNamespace(applied_edits=[SimpleNamespace(cleared_tool_uses=4)]))))
    assert feature.cleared == [4] and hooks.failures == []


def test_server_compaction_sends_its_edit_and_instructions_only_when_given():
    request = ServerCompaction(trigger=60_000).layout(inner)(PARTS)
    assert request["betas"] == ["already-on", COMPACT_THRESHOLD_BETA]
    assert request["context_management"] == {"edits": [{"type": "compact_20260112",
                                                        "trigger": {"type": "input_tokens", "value": 60_000}}]}
    assert ServerCompaction().edit["trigger"]["value"] == 150_000
    assert ServerCompaction(instructions="keep the URLs").edit["instructions"] == "keep the URLs"


class Agent:
    def __init__(self, messages):
        self.messages, self.replaced, self.calls = list(messages), [], []

    def replace_history(self, messages):
        self.replaced.append(list(messages))
        self.messages = list(messages)


def drop(messages):
    feature, agent = ServerCompaction(), Agent(messages)
    hooks = HookRegistry().install(feature)
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert hooks.failures == []
    return feature, agent


def test_the_client_drops_what_precedes_the_newest_compaction_block():
    history = [text("user", "task"), text("assistant", "a"), BLOCK, text("user", "b"), dict(BLOCK), text("user", "c")]
    feature, agent = drop(history)
    assert agent.messages == history[4:] and feature.compactions == 1


def test_nothing_is_dropped_without_a_block_or_with_the_block_already_first():
    for history in ([text("user", "task"), text("assistant", "a")], [BLOCK, text("user", "c")],
                    [text("user", "plain"), {"role": "user", "content": "a string"}]):
        feature, agent = drop(history)
        assert agent.replaced == [] and feature.compactions == 0


class Client:
    def __init__(self, *responses):
        self.responses, self.requests = list(responses), []
        self.beta = SimpleNamespace(messages=SimpleNamespace(create=self.create))

    def create(self, **request):
        self.requests.append(request)
        return self.responses.pop(0)


def usage():
    return {"input_tokens": 100, "output_tokens": 10}


def summary(content="the summary"):
    def dump(exclude_none):  # as the SDK's block does: its unset optional fields are None
        fields = {"type": "compaction", "content": content, "cache_control": None}
        return {k: v for k, v in fields.items() if v is not None} if exclude_none else fields
    block = SimpleNamespace(type="compaction", content=content, model_dump=dump)
    return SimpleNamespace(content=[block], usage=usage(), stop_reason="end_turn")


class WorkingAgent(Agent):
    def __init__(self, messages, client, tokens):
        super().__init__(messages)
        self.client, self.model = client, "claude-sonnet-5-5"
        self.system, self.tool_definitions = [{"type": "text", "text": "sys"}], []
        self.spec = SimpleNamespace(supports_prefill=True)
        self.calls = [SimpleNamespace(prompt_tokens=tokens)]
        self.tool_definitions = [{"name": "fetch"}]
        self.laid_out = []

    def layout(self, parts):
        self.laid_out.append(parts)
        return {"system": parts.system, "messages": list(parts.durable), "context_management": {"edits": []}}


def on_demand(feature, agent):
    hooks = HookRegistry().install(feature)
    hooks.run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert hooks.failures == []


def test_on_demand_waits_for_its_trigger():
    client = Client(summary())
    agent = WorkingAgent([text("user", "task")], client, tokens=999)
    on_demand(OnDemandCompaction(trigger=1_000), agent)
    assert client.requests == [] and agent.replaced == []


def test_on_demand_at_its_trigger_asks_for_a_summary_and_the_history_becomes_the_block():
    client = Client(summary())
    history = [text("user", "task"), text("assistant", "working")]
    agent = WorkingAgent(history, client, tokens=1_000)
    feature = OnDemandCompaction(trigger=1_000, max_tokens=4_000)
    on_demand(feature, agent)
    request, = client.requests
    assert request["compaction"] == {"type": "summarize"} and "context_management" not in request
    assert request["betas"] == [COMPACT_ON_DEMAND_BETA] and request["max_tokens"] == 4_000
    assert request["model"] == "claude-sonnet-5-5" and request["messages"] == history
    parts, = agent.laid_out  # the request is the agent's own layout of its whole history
    assert (parts.system, parts.tools, parts.durable, parts.prefill_ok) == (agent.system, [{"name": "fetch"}], history, True)
    assert agent.messages == [{"role": "assistant", "content": [{"type": "compaction", "content": "the summary"}]},
                              {"role": "user", "content": [{"type": "text", "text": CONTINUE}]}]
    assert len(feature.spent) == 1 and feature.failed == []
    assert (feature.spent[0].model, feature.spent[0].input_tokens, feature.spent[0].output_tokens) == \
        ("claude-sonnet-5-5", 100, 10)


def test_on_demand_passes_its_instructions_and_defaults_to_sixteen_thousand_tokens():
    client = Client(summary())
    on_demand(OnDemandCompaction(trigger=10, instructions="keep numbers"), WorkingAgent([text("user", "t")], client, 10))
    assert client.requests[0]["compaction"] == {"type": "summarize", "instructions": "keep numbers"}
    assert client.requests[0]["max_tokens"] == 16_000


def test_no_summary_or_an_empty_one_leaves_the_history_and_records_why():
    empty = summary(content="")
    nothing = SimpleNamespace(content=[SimpleNamespace(type="text", text="no")], usage=usage(), stop_reason="max_tokens")
    client = Client(nothing, empty)
    feature = OnDemandCompaction(trigger=10)
    agent = WorkingAgent([text("user", "t")], client, 10)
    on_demand(feature, agent)
    on_demand(feature, agent)
    assert agent.replaced == [] and feature.failed == ["max_tokens", "end_turn"] and len(feature.spent) == 2


def test_the_block_carries_its_beta_on_every_later_request_and_only_then():
    layout = OnDemandCompaction(trigger=10).layout(inner)
    with_block = CallParts(system=[], tools=[], durable=[BLOCK, text("user", CONTINUE)])
    assert layout(with_block)["betas"] == ["already-on", COMPACT_ON_DEMAND_BETA]
    assert layout(PARTS)["betas"] == ["already-on"]
    assert OnDemandCompaction(trigger=10).layout(bare)(with_block)["betas"] == [COMPACT_ON_DEMAND_BETA]
    later = CallParts(system=[], tools=[], durable=[text("user", "x"), BLOCK])
    assert "betas" not in OnDemandCompaction(trigger=10).layout(bare)(later)
    assert "betas" not in OnDemandCompaction(trigger=10).layout(bare)(CallParts(system=[], tools=[], durable=[]))
