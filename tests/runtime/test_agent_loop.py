"""The agent loop on the running example: tools, failures, masking, limits, clean stops."""

from __future__ import annotations


import pytest
from minimal_runtime.emulator import ScriptedPolicy, Turn, text, tool_use
from minimal_runtime.core.messages import dumps, tool_uses
from tests.support import TASK, pricing_agent


def results(agent) -> list[dict]:
    return [b for m in agent.messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]


def test_the_running_example_completes_with_a_failed_fetch_kept(tmp_path):
    agent, emu, outbox = pricing_agent(tmp_path)
    result = agent.run(TASK)
    assert result.status == "done" and result.steps == 14 and "report.md" in result.final_text
    report = (tmp_path / "workspace" / "report.md").read_text()
    assert all(name in report for name in ("Acme", "Globex", "Initech", "Umbrella"))
    failed = [r for r in results(agent) if r.get("is_error")]
    assert len(failed) == 1 and "404" in failed[0]["content"]  # the wrong turn stays in the history
    assert len(outbox) == 2
    assert len(agent.calls) == len(emu.calls) == 14


def test_history_alternates_and_pairs_every_tool_call(tmp_path):
    agent, _, _ = pricing_agent(tmp_path)
    agent.run(TASK)
    roles = [m["role"] for m in agent.messages]
    assert roles == ["user"] + ["assistant", "user"] * 13 + ["assistant"]
    for asked, answered in zip(agent.messages[1::2], agent.messages[2::2]):
        assert [c["id"] for c in tool_uses(asked)] == [r["tool_use_id"] for r in answered["content"]]


def test_malformed_tool_input_gets_an_error_result_and_the_run_goes_on(tmp_path):
    policy = ScriptedPolicy([[tool_use("fetch", {"address": "https://acme.example/pricing"})],
                             [tool_use("write_file", {"path": "a.md"})], "I give up."])
    agent, _, _ = pricing_agent(tmp_path, policy=policy)
    assert agent.run(TASK).status == "done"
    errors = [r["content"] for r in results(agent)]
    assert errors == ["Invalid input for fetch: url: Field required", "Invalid input for write_file: content: Field required"]


def test_unknown_tools_and_escaping_paths_are_refused(tmp_path):
    policy = ScriptedPolicy([[tool_use("delete_everything", {})], [tool_use("read_file", {"path": "../../etc/passwd"})], "ok"])
    agent, _, _ = pricing_agent(tmp_path, policy=policy)
    agent.run(TASK)
    unknown, escape = results(agent)
    assert unknown["is_error"] and "Unknown tool" in unknown["content"]
    assert escape["is_error"] and "outside the workspace" in escape["content"]


def test_masked_tools_are_refused_and_the_tool_list_never_changes(tmp_path):
    policy = ScriptedPolicy([[tool_use("browse", {"url": "https://acme.example/pricing"})],
                             [tool_use("fetch", {"url": "https://globex.example/pricing"})], "done"])
    agent, emu, _ = pricing_agent(tmp_path, policy=policy)
    seen_tools = []
    agent.hooks.register("post_llm_call", lambda e: seen_tools.append(dumps(e.request["tools"])))
    agent.toolbox.mask("browse")
    agent.run(TASK)
    masked, allowed = results(agent)
    assert masked["is_error"] and "not available" in masked["content"]
    assert not allowed.get("is_error") and "Globex" in allowed["content"]
    assert len(set(seen_tools)) == 1 and "browse" in seen_tools[0]  # still listed: masked, not removed
    assert emu.calls[1].cache_read_input_tokens > 0 and emu.calls[2].cache_read_input_tokens > 0


def test_a_tool_that_raises_becomes_an_error_result(tmp_path):
    from minimal_runtime.core.tools import FunctionTool
    from pydantic import BaseModel

    class Nothing(BaseModel):
        pass

    def flaky(_):
        raise TimeoutError("upstream timed out")
    policy = ScriptedPolicy([[tool_use("flaky", {})], "noted"])
    agent, _, _ = pricing_agent(tmp_path, policy=policy)
    agent.toolbox = type(agent.toolbox)([FunctionTool("flaky", "fails", Nothing, flaky)])
    agent.run(TASK)
    assert results(agent)[0] == {"type": "tool_result", "tool_use_id": results(agent)[0]["tool_use_id"],
                                 "content": "flaky failed: TimeoutError: upstream timed out", "is_error": True}


def test_the_step_limit_ends_the_run_as_max_steps(tmp_path):
    agent, _, _ = pricing_agent(tmp_path, max_steps=5)
    result = agent.run(TASK)
    assert result.status == "max_steps" and result.steps == 5
    assert len(agent.messages) == 1 + 2 * 5


def test_transient_faults_are_survived(tmp_path):
    agent, emu, _ = pricing_agent(tmp_path)
    emu.inject_fault(429, count=2)
    assert agent.run(TASK).status == "done"


def test_prompt_too_long_stops_cleanly_and_keeps_the_history(tmp_path):
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "big.txt").write_text("x" * 500_000)  # ~125K tokens: twice is over the window
    policy = ScriptedPolicy([[tool_use("read_file", {"path": "big.txt"})],
                             [tool_use("read_file", {"path": "big.txt"})], "unreachable"])
    agent, _, _ = pricing_agent(tmp_path, policy=policy, model="claude-opus-4-5",  # 200K window
                                max_tool_output=1_000_000)  # past the default cap, which would cut both outputs
    result = agent.run(TASK)
    assert result.status == "error" and "prompt is too long" in result.error
    assert len(agent.messages) == 5  # task + two complete turns; the failed call appended nothing


def test_resuming_a_finished_conversation_with_a_new_message(tmp_path):
    policy = ScriptedPolicy([Turn(content=[text("first answer")]), Turn(content=[text("second answer")])])
    agent, _, _ = pricing_agent(tmp_path, policy=policy)
    assert agent.run("one").final_text == "first answer"
    assert agent.run("two").final_text == "second answer"
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]


def test_a_protocol_tool_that_raises_does_not_end_the_run(tmp_path):
    class Exploding:
        name, description = "explode", "raises instead of returning an error"

        def definition(self):
            return {"name": self.name, "description": self.description, "input_schema": {"type": "object"}}

        def run(self, raw_input):
            raise OSError("disk on fire")
    policy = ScriptedPolicy([[tool_use("explode", {})], "carrying on"])
    agent, _, _ = pricing_agent(tmp_path, policy=policy)
    agent.toolbox = type(agent.toolbox)([Exploding()])
    assert agent.run(TASK).final_text == "carrying on"
    assert results(agent)[0]["is_error"] and "OSError: disk on fire" in results(agent)[0]["content"]


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "claude-sonnet-5-5"])
def test_a_tool_that_prints_nothing_keeps_the_cache_working(tmp_path, model):
    """The API refuses a breakpoint on empty content; the breakpoint moves to the block before it,
    and every call still reads the previous one from cache (found replaying a real session)."""
    from minimal_runtime.core.tools import FunctionTool
    from pydantic import BaseModel

    class Nothing(BaseModel):
        pass
    policy = ScriptedPolicy([*([tool_use("quiet", {})] for _ in range(8)), "done"])
    agent, emu, _ = pricing_agent(tmp_path, policy=policy, model=model)
    agent.toolbox = type(agent.toolbox)([FunctionTool("quiet", "prints nothing", Nothing, lambda _: "")])
    assert agent.run(TASK).status == "done"
    assert all(r["content"] == "" for r in results(agent))
    reads = [c.cache_read_input_tokens for c in emu.calls]
    assert all(later > earlier for earlier, later in zip(reads[1:], reads[2:])), reads
