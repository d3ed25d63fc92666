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
        assert kept["content"] != content and path in kept["content"], \
            f"over the threshold, the content is replaced by a placeholder naming {path!r}: got {kept['content'][:200]!r}"
        try:
            kept["content"].encode("utf-8")
        except UnicodeEncodeError as e:
            raise AssertionError(f"the placeholder is not valid UTF-8 ({e}): replace lone surrogates in the preview by U+FFFD")
        assert offloader.restore(path).encode("utf-8", "surrogateescape") == raw, \
            "restore(path) did not give back the exact content: write and read the file's bytes with 'surrogateescape'"
        assert (offloader.root / path).read_bytes() == raw, \
            "the file does not hold the tool's bytes exactly: encode the content with 'surrogateescape' when writing"


def test_empty_and_small_results_are_untouched(impl, tmp_path):
    offloader = impl.Offloader(tmp_path, threshold=100)
    for content in ("", "short output", "x" * 100):
        block = {"type": "tool_result", "tool_use_id": "t", "content": content}
        assert offloader({"id": "t"}, block) == block, f"a result of {len(content)} characters (threshold 100) is kept as it is"
    assert not (tmp_path / ".observations").exists(), "nothing over the threshold, so nothing should be written to disk"


def test_placeholder_has_size_path_head_and_tail(impl, tmp_path):
    offloader = impl.Offloader(tmp_path, threshold=1000, head=50, tail=20)
    content = "HEAD-" + "m" * 5000 + "-TAIL"
    kept = offloader({"id": "toolu_9"}, {"type": "tool_result", "tool_use_id": "toolu_9", "content": content})
    text = kept["content"]
    assert "5,010 characters" in text and offloader.path_for("toolu_9") in text, \
        f"the placeholder should give the size as '5,010 characters' and the path {offloader.path_for('toolu_9')!r}: {text!r}"
    assert content[:50] in text and content[-20:] in text and "m" * 200 not in text, \
        f"the placeholder should hold the first 50 (head) and last 20 (tail) characters and not the middle: {text[:300]!r}"
    assert kept["tool_use_id"] == "toolu_9" and kept["type"] == "tool_result", \
        "the block kept is a copy of the tool_result (type and tool_use_id as they were) with the new content"


def test_a_path_outside_the_workspace_is_refused(impl, tmp_path):
    offloader = impl.Offloader(tmp_path / "run", threshold=0)
    with pytest.raises(PermissionError):  # a path that resolves outside the workspace is refused
        offloader.offload("secret", "../outside.txt")
    assert not (tmp_path / "outside.txt").exists(), "the file was written outside the workspace: check the path before writing"


def test_an_agent_offloads_and_reads_back_through_the_ordinary_read_tool(impl, tmp_path):
    offloader = impl.Offloader(tmp_path / "workspace", threshold=4000)
    store = RunStore(tmp_path / "run")
    agent, _, _ = pricing_agent(tmp_path, offloader=offloader, store=store)
    result = agent.run(TASK)
    assert result.status == "done", f"the run stopped: {result.error}"
    results = [b for m in agent.messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]
    offloaded = [b for b in results if ".observations/" in b["content"]]
    assert len(offloaded) >= 4, f"every full pricing page (over 4,000 characters) should be offloaded; {len(offloaded)} were"
    raw = store.load().tool_outputs
    for block in offloaded:
        path = offloader.path_for(block["tool_use_id"])
        restored = agent.toolbox.call({"id": "check", "name": "read_file", "input": {"path": path}})
        assert restored["content"] == raw[block["tool_use_id"]], f"read_file({path!r}) did not give back the tool's output exactly"
    assert (tmp_path / "workspace" / "report.md").read_text().count("| Initech |") == 2, \
        "the agent's report lacks the figures it should have read back from the offloaded pages"
