"""A strategy's limits are the log's tokens translated into the emulator's estimate; what reaches the
server must still be a request the API takes. Logs whose real tokenizer counts more than the estimate
(code and JSON do: 1.2 to 1.3 of the log's tokens per estimated token is common) translate the
60,000-token compaction limit below the 50,000 the API accepts as a ``compact_20260112`` trigger."""

from __future__ import annotations

from minimal_runtime.replay import load, replay, replay_all
from tests.replay.test_real_variants import assistant, init, result, tool_use, usage, write

MODEL = "claude-sonnet-4-6"  # takes server-side compaction


def dense_log(tmp_path, factor: float = 1.3):
    """A headless log whose tool results are counted ``factor`` log tokens per estimated token, and
    whose prompt grows past 60,000 of its tokens (each call reads what the one before it wrote)."""
    init_line = {**init(), "model": MODEL}
    lines, before, prompt = [init_line], 0, 2_000
    text = "x = compute(a, b)  # code\n" * 1_540  # ~40,000 characters: ~10,000 estimated tokens
    for k in range(1, 7):
        lines.append(assistant(f"msg_{k}", [tool_use(f"toolu_{k}", "Read", file_path=f"f{k}.py")],
                               usage(3, prompt - 3 - before, before)))
        lines.append(result(f"toolu_{k}", text))
        before, prompt = prompt - 3, prompt + round(len(text) / 4 * factor)
    lines.append(assistant("msg_7", [{"type": "text", "text": "Done."}], usage(3, prompt - 3 - before, before)))
    for line in lines[1:]:
        if line["type"] == "assistant":
            line["message"]["model"] = MODEL
    return write(tmp_path / "dense.stream.jsonl", lines)


def test_server_compaction_is_never_sent_a_trigger_the_api_refuses(tmp_path):
    (run,) = load(dense_log(tmp_path))
    assert max(c.usage.prompt_tokens for c in run.calls) > 60_000
    replayed = replay(run, "server-compact")
    assert replayed.stopped is None, replayed.stopped
    assert len(replayed.calls) == len(run.calls)
    (through_all,) = [r for r in replay_all(run, ["server-compact"])]
    assert through_all.stopped is None, through_all.stopped
