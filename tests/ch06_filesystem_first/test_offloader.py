"""Chapter 06: large observations go to files; head, tail, size and path stay; nothing is lost."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minimal_runtime.core.store import RunStore
from tests.support import TASK, pricing_agent


raw_outputs = st.one_of(
    st.binary(max_size=20_000),  # anything at all, mostly not UTF-8
    st.text(max_size=20_000).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.text(max_size=5_000).map(lambda s: s.encode("utf-16", "surrogatepass")),
    st.text(alphabet=st.characters(max_codepoint=255), max_size=20_000).map(lambda s: s.encode("latin-1")),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=raw_outputs)
def test_round_trip_byte_for_byte(impl, tmp_path_factory, raw):
    offloader = impl.Offloader(tmp_path_factory.mktemp("ws"), threshold=0)
    content = raw.decode("utf-8", "surrogateescape")  # how undecodable tool output becomes a str
    kept = offloader({"id": "toolu_1"}, {"type": "tool_result", "tool_use_id": "toolu_1", "content": content})
    path = offloader.path_for("toolu_1")
    if content:
        assert kept["content"] != content and path in kept["content"]
        kept["content"].encode("utf-8")  # the placeholder is valid UTF-8, whatever the bytes were
        assert offloader.restore(path).encode("utf-8", "surrogateescape") == raw
        assert (offloader.root / path).read_bytes() == raw


def test_empty_and_small_results_are_untouched(impl, tmp_path):
    offloader = impl.Offloader(tmp_path, threshold=100)
    for content in ("", "short output", "x" * 100):
        block = {"type": "tool_result", "tool_use_id": "t", "content": content}
        assert offloader({"id": "t"}, block) == block
    assert not (tmp_path / ".observations").exists()


def test_placeholder_has_size_path_head_and_tail(impl, tmp_path):
    offloader = impl.Offloader(tmp_path, threshold=1000, head=50, tail=20)
    content = "HEAD-" + "m" * 5000 + "-TAIL"
    kept = offloader({"id": "toolu_9"}, {"type": "tool_result", "tool_use_id": "toolu_9", "content": content})
    text = kept["content"]
    assert "5,010 characters" in text and offloader.path_for("toolu_9") in text
    assert content[:50] in text and content[-20:] in text and "m" * 200 not in text
    assert kept["tool_use_id"] == "toolu_9" and kept["type"] == "tool_result"


def test_a_path_outside_the_workspace_is_refused(impl, tmp_path):
    offloader = impl.Offloader(tmp_path / "run", threshold=0)
    with pytest.raises(PermissionError):
        offloader.offload("secret", "../outside.txt")
    assert not (tmp_path / "outside.txt").exists()


def test_an_agent_offloads_and_reads_back_through_the_ordinary_read_tool(impl, tmp_path):
    offloader = impl.Offloader(tmp_path / "workspace", threshold=4000)
    store = RunStore(tmp_path / "run")
    agent, _, _ = pricing_agent(tmp_path, offloader=offloader, store=store)
    assert agent.run(TASK).status == "done"
    results = [b for m in agent.messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    offloaded = [b for b in results if ".observations/" in b["content"]]
    assert len(offloaded) >= 4  # every full pricing page
    raw = store.load().tool_outputs
    for block in offloaded:
        path = offloader.path_for(block["tool_use_id"])
        restored = agent.toolbox.call({"id": "check", "name": "read_file", "input": {"path": path}})
        assert restored["content"] == raw[block["tool_use_id"]]
    assert (tmp_path / "workspace" / "report.md").read_text().count("| Initech |") == 2
