"""The variants real logs come in, each built from the structure of a real log's lines (the field
names and nesting of Claude Code 2.0.21 stream-json, Claude Code 2.1 session files, OpenHands
output.jsonl), cut down to a few lines. And everything that is not a trajectory: refused in one line."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from minimal_runtime.replay import TrajectoryError, load, replay

SESSION = "e5c1ddb1-379a-475d-8d16-6bc03b5d7f9e"
MODEL = "claude-sonnet-4-5-20250929"


def usage(fresh: int, write: int, read: int, out: int = 40, one_hour: bool = False) -> dict:
    return {"input_tokens": fresh, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": 0 if one_hour else write,
                               "ephemeral_1h_input_tokens": write if one_hour else 0},
            "output_tokens": out, "service_tier": "standard"}


def init() -> dict:
    return {"type": "system", "subtype": "init", "cwd": "/tmp/w", "session_id": SESSION, "tools": ["Task", "Bash", "Read"],
            "mcp_servers": [], "model": MODEL, "permissionMode": "bypassPermissions", "claude_code_version": "2.0.21",
            "uuid": "u0"}


def assistant(mid: str, blocks: list[dict], u: dict, parent: str | None = None) -> dict:
    return {"type": "assistant", "message": {"model": MODEL, "id": mid, "type": "message", "role": "assistant",
                                             "content": blocks, "stop_reason": None, "usage": u},
            "parent_tool_use_id": parent, "session_id": SESSION, "uuid": f"a-{mid}-{len(blocks)}"}


def tool_use(tid: str, name: str = "Bash", **args) -> dict:
    return {"type": "tool_use", "id": tid, "name": name, "input": args or {"command": "ls"}}


def result(tid: str, text: str = "ok", parent: str | None = None) -> dict:
    return {"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": tid, "type": "tool_result", "content": text}]}, "parent_tool_use_id": parent,
        "session_id": SESSION, "uuid": f"r-{tid}"}


def final(cost: float = 0.12) -> dict:
    return {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "session_id": SESSION,
            "total_cost_usd": cost, "usage": usage(10, 100, 1000)}


def write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


def headless(tmp_path: Path) -> Path:
    """A headless run: init, then the first call straight away (no prompt line), two tool rounds."""
    return write(tmp_path / "run.stream.jsonl", [
        init(),
        assistant("msg_1", [{"type": "text", "text": "Looking."}], usage(2, 6_000, 12_000, one_hour=True)),
        assistant("msg_1", [tool_use("toolu_1")], usage(2, 6_000, 12_000, one_hour=True)),
        result("toolu_1", "a.py b.py"),
        assistant("msg_2", [tool_use("toolu_2", "Read", file_path="a.py")], usage(3, 300, 18_000)),
        result("toolu_2", "print(1)"),
        assistant("msg_3", [{"type": "text", "text": "Done."}], usage(3, 200, 18_300)),
        final(),
    ])


def test_headless_stream_json_without_a_prompt_line_imports_with_a_placeholder(tmp_path):
    (run,) = load(headless(tmp_path))
    assert run.source == "claude-code-stream" and len(run.calls) == 3 and run.cost_usd == 0.12
    assert "not in its log" in run.task[0]["text"]
    assert run.prompt_missing and any("no prompt line" in n for n in run.notes)
    replayed = replay(run, "recorded")
    assert len(replayed.calls) == 3 and replayed.calls[0].prompt_tokens == pytest.approx(18_002, rel=0.05)


def test_stream_json_compaction_summary_arrives_as_a_synthetic_user_line(tmp_path):
    path = write(tmp_path / "compacted.stream.jsonl", [
        init(),
        assistant("msg_1", [tool_use("toolu_1")], usage(2, 50_000, 100_000)),
        result("toolu_1", "x" * 400),
        {"type": "system", "subtype": "compact_boundary", "session_id": SESSION, "uuid": "cb",
         "compact_metadata": {"trigger": "auto", "pre_tokens": 157_975}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text":
         "This session is being continued from a previous conversation that ran out of context. Summary: listed files."}]},
         "parent_tool_use_id": None, "session_id": SESSION, "uuid": "s", "isSynthetic": True},
        assistant("msg_2", [{"type": "text", "text": "Continuing."}], usage(3, 13_315, 12_593)),
        final(),
    ])
    (run,) = load(path)
    assert run.compactions == 1 and "continued from a previous conversation" in run.calls[1].compacted_before
    assert run.calls[1].then_user == [] and run.skipped["compact_boundary"] == 1
    replayed = replay(run, "recorded")
    assert replayed.calls[1].prompt_tokens < replayed.calls[0].prompt_tokens  # the history was replaced


def test_stream_json_sub_agent_lines_become_a_run_of_their_own(tmp_path):
    path = write(tmp_path / "task.stream.jsonl", [
        init(),
        assistant("msg_1", [tool_use("toolu_task", "Task", description="find", prompt="Find the config file.")],
                  usage(2, 8_000, 10_000)),
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "Find the config file."}]},
         "parent_tool_use_id": "toolu_task", "session_id": SESSION, "uuid": "sub-u"},
        assistant("msg_s1", [tool_use("toolu_s1", "Bash", command="ls conf")], usage(3, 4_000, 0), parent="toolu_task"),
        result("toolu_s1", "app.toml", parent="toolu_task"),
        assistant("msg_s2", [{"type": "text", "text": "conf/app.toml"}], usage(3, 100, 4_000), parent="toolu_task"),
        result("toolu_task", "conf/app.toml"),
        assistant("msg_2", [{"type": "text", "text": "The config is conf/app.toml."}], usage(3, 200, 18_000)),
        final(),
    ])
    main, sub = load(path)
    assert len(main.calls) == 2 and main.calls[0].results["toolu_task"]["content"] == "conf/app.toml"
    assert sub.path.endswith("#subagent-toolu_task") and len(sub.calls) == 2
    assert sub.task[0]["text"] == "Find the config file." and sub.model == MODEL


def test_redacted_ids_are_paired_by_position_and_said(tmp_path):
    R = "[REDACTED_TOKEN]"
    lines = [init()]
    for k in range(3):  # three calls, two parallel tool uses each, every id the same placeholder
        lines += [assistant(R, [tool_use(R, command=f"step {k} a")], usage(2, 100, 10_000 + 1_000 * k)),
                  assistant(R, [tool_use(R, command=f"step {k} b")], usage(2, 100, 10_000 + 1_000 * k)),
                  result(R, f"out {k} a"), result(R, f"out {k} b")]
    lines += [assistant(R, [{"type": "text", "text": "Done."}], usage(2, 100, 14_000)), final()]
    (run,) = load(write(tmp_path / "redacted.stream.jsonl", lines))
    assert len(run.calls) == 4
    for k, call in enumerate(run.calls[:3]):
        uses = [b for b in call.assistant["content"] if b["type"] == "tool_use"]
        assert len(uses) == 2 and len({u["id"] for u in uses}) == 2
        assert [call.results[u["id"]]["content"] for u in uses] == [f"out {k} a", f"out {k} b"]
    assert any("paired with their calls by position" in n for n in run.notes)
    assert any("told apart by their prompt size" in n for n in run.notes)
    assert len(replay(run, "recorded").calls) == 4


def test_one_hour_writes_are_kept_and_priced_at_twice_the_input_price(tmp_path):
    (run,) = load(headless(tmp_path))
    first = run.calls[0].usage
    assert first.cache_write == first.cache_write_1h == 6_000
    as_5m = first.model_copy(update={"cache_write_1h": 0})
    # Sonnet 4.5: input $3/MTok, 5-minute write $3.75, 1-hour write $6: 6,000 tokens differ by $0.0135
    assert first.cost("claude-sonnet-4-5") - as_5m.cost("claude-sonnet-4-5") == pytest.approx(6_000 * (6.00 - 3.75) / 1e6)


def test_openhands_recall_and_error_observations_reach_the_model(tmp_path):
    def agent_action(k: int, command: str) -> list[dict]:
        response = {"id": f"resp-{k}", "model": "gpt-4o", "choices": [{"message": {"content": None, "tool_calls": [
            {"id": f"call_{k}", "function": {"name": "execute_bash", "arguments": json.dumps({"command": command})}}]}}]}
        meta = {"function_name": "execute_bash", "tool_call_id": f"call_{k}", "model_response": response}
        return [{"id": 10 * k, "source": "agent", "action": "run", "args": {"command": command}, "tool_call_metadata": meta},
                {"id": 10 * k + 1, "source": "agent", "observation": "run", "content": f"ran {command}",
                 "tool_call_metadata": meta}]
    history = [{"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands."}},
               {"id": 1, "source": "user", "action": "message", "message": "Fix the bug."},
               {"id": 2, "source": "user", "action": "recall", "args": {"recall_type": "workspace_context"}},
               {"id": 4, "source": "environment", "message": "Added workspace context", "cause": 2, "observation": "recall",
                "content": "Added workspace context", "extras": {"recall_type": "workspace_context", "repo_instructions": "",
                "microagent_knowledge": [{"name": "github", "trigger": "github", "content": "Use the GitHub API."}]}},
               *agent_action(1, "ls"),
               {"id": 29, "source": "agent", "message": "Parameter 'command' is expected to be one of ['view'].",
                "observation": "error", "content": "Parameter 'command' is expected to be one of ['view'].",
                "extras": {"error_id": ""}},
               *agent_action(2, "cat a.py")]
    line = {"instance_id": "repo__1", "history": history, "metrics": {"token_usages": [
        {"response_id": "resp-1", "prompt_tokens": 5_000, "completion_tokens": 30, "cache_read_tokens": 0},
        {"response_id": "resp-2", "prompt_tokens": 5_400, "completion_tokens": 30, "cache_read_tokens": 0}]}}
    (run,) = load(write(tmp_path / "output.jsonl", [line]))
    assert [b["text"] for b in run.task] == ["Fix the bug.", "Use the GitHub API."]
    assert run.calls[0].then_user[0]["text"].startswith("Parameter 'command'")
    assert run.skipped == {"recall": 1}  # the recall *action* is a request, not conversation; its observation is


UNSUPPORTED = {
    "codex.jsonl": ('{"type":"thread.started","thread_id":"t1"}\n{"type":"item.completed","item":{"id":"i0"}}\n',
                    "read as codex, but it holds no model calls (1 item/None)"),
    "empty.jsonl": ("", "an empty file"),
    "blank.jsonl": ("\n\n  \n", "an empty file"),
    "resolver.json": ('{"issue": {"number": 3}, "base_commit": "abc", "git_patch": "", "success": false}',
                      "not a trajectory I know (keys: base_commit, git_patch, issue, success)"),
    "messages.json": ('[{"role": "user", "content": "hi"}]', "read as cline, but it holds no model calls"),
    "numbers.json": ("[1, 2]", "a JSON list, not a trajectory"),
    "hello.jsonl": ('{"hello": 1}\n', "not a trajectory I know (keys: hello)"),
    "binary.jsonl": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "not UTF-8 text"),
    "utf16.jsonl": ('{"type": "user"}\n'.encode("utf-16"), "not UTF-8 text"),
    "only-progress.jsonl": ('{"type": "progress", "data": {}}\n', "holds no model calls (1 progress)"),
}


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_anything_unsupported_is_refused_in_one_line(tmp_path, name, capsys):
    from minimal_runtime.__main__ import main
    content, says = UNSUPPORTED[name]
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(TrajectoryError, match=None) as refused:
        load(path)
    assert says in str(refused.value) and name in str(refused.value)
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(path)])
    message = str(stopped.value.code)
    assert message.startswith("cannot import: ") and "\n" not in message and says in message


@pytest.mark.parametrize("where", ["directory", "missing"])
def test_an_empty_directory_or_a_missing_path_is_refused_in_one_line(tmp_path, where):
    from minimal_runtime.__main__ import main
    path = tmp_path if where == "directory" else tmp_path / "nope.jsonl"
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(path)])
    # a directory is replayed as a folder of logs: this one holds none
    assert str(stopped.value.code) == f"cannot import: {path}: " + ("no files under it"
                                                                     if where == "directory" else "no such file")


def _mutations(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    k = rng.randrange(len(lines))
    choice = rng.randrange(6)
    if choice == 0:  # truncate somewhere
        return text[:rng.randrange(len(text))]
    if choice == 1:  # drop a line
        return "".join(lines[:k] + lines[k + 1:])
    if choice == 2:  # a line's JSON with a key removed or a value of the wrong type
        d = json.loads(lines[k])
        key = rng.choice(sorted(d))
        d[key] = rng.choice([None, 7, "x", [], {}]) if rng.random() < 0.7 else d.pop(key) and None
        return "".join(lines[:k] + [json.dumps(d) + "\n"] + lines[k + 1:])
    if choice == 3:  # swap two lines
        j = rng.randrange(len(lines))
        lines[k], lines[j] = lines[j], lines[k]
        return "".join(lines)
    if choice == 4:  # the message's content of the wrong type
        d = json.loads(lines[k])
        if isinstance(d.get("message"), dict):
            d["message"]["content"] = rng.choice([None, 3, {"a": 1}, [None, 5, "s"]])
        return "".join(lines[:k] + [json.dumps(d) + "\n"] + lines[k + 1:])
    return "".join(lines[:k] + ["{not json\n"] + lines[k:])  # garbage in the middle


@pytest.mark.parametrize("fmt", ["headless", "claude-code", "openhands"])
def test_fuzz_malformed_logs_stop_with_one_line_and_no_traceback(tmp_path, capsys, fmt):
    """60 mutations of a log of each line-based format: each either imports and replays, or stops
    the command with one line. Nothing else (no traceback from the importer or the replay). One in
    thirty is also plotted: drawing a figure costs more than the replay itself."""
    from minimal_runtime.__main__ import main
    from minimal_runtime.replay.samples import write_samples
    rng = random.Random(13)
    source = (headless(tmp_path) if fmt == "headless" else write_samples(tmp_path / "samples")[fmt]).read_text()
    refused = 0
    for k in range(60):
        path = tmp_path / f"m{k}.jsonl"
        path.write_text(_mutations(source, rng))
        try:
            main(["replay", str(path), "--strategy", "recorded", "--plot", str(tmp_path / "p.png") if k % 30 == 0 else "none"])
        except SystemExit as stopped:
            message = str(stopped.code)
            assert message.startswith("cannot import: ") and "\n" not in message, message
            refused += 1
    capsys.readouterr()
    assert 10 < refused < 50  # both outcomes were exercised, each many times


def third_call_read_nothing(path: Path) -> Path:
    """A four-call log whose third call read nothing from cache though its prefix had been written."""
    return write(path, [
        init(),
        assistant("msg_1", [tool_use("toolu_1")], usage(2, 6_000, 12_000)), result("toolu_1", "a.py"),
        assistant("msg_2", [tool_use("toolu_2")], usage(3, 300, 18_000)), result("toolu_2", "b.py"),
        assistant("msg_3", [tool_use("toolu_3")], usage(3, 18_400, 0)), result("toolu_3", "c.py"),
        assistant("msg_4", [{"type": "text", "text": "Done."}], usage(3, 200, 18_500)), final(),
    ])


def test_a_call_the_replay_cannot_reproduce_is_marked_as_a_departure(tmp_path, capsys):
    """The log's third call read nothing from cache (its system prompt changed, say, which the log
    does not record): the replay's own cache reads as usual there, and per_call marks the call;
    ``recorded`` bills it as the log did, so its table says so in the misses note, and does not say
    ``recorded`` departs there (issue 62 item 12)."""
    from minimal_runtime.__main__ import main
    from minimal_runtime.replay import per_call
    path = third_call_read_nothing(tmp_path / "changed.stream.jsonl")
    (run,) = load(path)
    calls = per_call(run, replay(run, "recorded"))
    assert [d["call"] for d in calls if d["departs"]] == [3]
    assert calls[2]["logged_read"] == 0 and calls[2]["replayed_read"] > 18_000
    main(["replay", str(path), "--strategy", "recorded", "--plot", str(tmp_path / "p.png")])
    out = capsys.readouterr().out
    assert calls[2]["billed_as_logged"] and "recorded departs" not in out
    # the replay reads what call 2 sent, 18,303 of call 3's 18,403 tokens
    assert "the log missed the cache where the replay's would have read, on 1 call(s): 3 (read 0% logged, 99% replayed)" \
        in out


@pytest.fixture(scope="module")
def sample_session(tmp_path_factory) -> str:
    from minimal_runtime.replay.samples import write_samples
    return write_samples(tmp_path_factory.mktemp("samples"))["claude-code"].read_text()


def test_a_first_line_of_a_kind_nobody_knows_is_skipped_and_counted(tmp_path, sample_session):
    """Today's session files start with a ``queue-operation`` line; tomorrow's may start with
    anything: a line that carries no model call is skipped, counted, and said in the notes."""
    session = sample_session
    for kind in ("queue-operation", "telemetry-v9"):
        path = tmp_path / f"{kind}.jsonl"
        path.write_text(json.dumps({"type": kind, "operation": "enqueue", "timestamp": "2026-11-30T10:00:00Z",
                                    "sessionId": "sample", "content": "go"}) + "\n" + session)
        (run,) = load(path)
        assert len(run.calls) == 14 and run.skipped[kind] == 1
        assert any(f"1 {kind}" in n for n in run.notes)


def test_json_nested_thousands_deep_is_one_line_not_a_traceback(tmp_path):
    from minimal_runtime.__main__ import main
    good = write(tmp_path / "ok.jsonl", [{"type": "user", "message": {"role": "user", "content": "hi"}, "sessionId": "s"}])
    for name, line in [("array", "[" * 5000 + "]" * 5000),
                       ("object", '{"type": "user", "message": ' + '{"a": ' * 4000 + "1" + "}" * 4001)]:
        path = tmp_path / f"deep-{name}.jsonl"
        path.write_text(good.read_text() + line + "\n")
        with pytest.raises(SystemExit) as stopped:
            main(["replay", str(path)])
        message = str(stopped.value.code)
        assert message == f"cannot import: {path}:2: JSON nested too deeply to read (thousands of levels): no agent writes that"
        document = tmp_path / f"deep-{name}.traj.json"
        document.write_text(line)
        with pytest.raises(SystemExit, match="nested too deeply") as stopped:
            main(["replay", str(document)])
        assert "\n" not in str(stopped.value.code)


@pytest.mark.parametrize("variant", ["empty-assistant", "empty-user", "orphan-result", "torn-last", "thinking-only"])
def test_session_variants_that_ended_in_an_index_error_import_or_stop_in_one_line(tmp_path, variant, capsys,
                                                                                 sample_session):
    """Empty content lists, a tool_result with no tool_use before it, a torn last line, a call that
    is only thinking: each imports and replays, or stops the command with one line."""
    from minimal_runtime.__main__ import main
    lines = [json.loads(x) for x in sample_session.splitlines()]
    assistants = [d for d in lines if d["type"] == "assistant"]
    users = [d for d in lines if d["type"] == "user" and isinstance(d["message"]["content"], list)]
    if variant == "empty-assistant":
        assistants[-1]["message"]["content"] = []
    elif variant == "empty-user":
        users[3]["message"]["content"] = []
    elif variant == "orphan-result":
        users[3]["message"]["content"][0]["tool_use_id"] = "toolu_ghost"
    elif variant == "thinking-only":
        assistants[-1]["message"]["content"] = [{"type": "thinking", "thinking": "", "signature": "sig"}]
    text = "".join(json.dumps(d) + "\n" for d in lines)
    path = tmp_path / f"{variant}.jsonl"
    path.write_text(text[:-30] if variant == "torn-last" else text)
    try:
        main(["replay", str(path), "--strategy", "recorded", "--strategy", "ladder", "--plot", str(tmp_path / "p.png")])
        out = capsys.readouterr().out
        assert "the log itself" in out and "Traceback" not in out
    except SystemExit as stopped:
        message = str(stopped.code)
        assert "\n" not in message and (message.startswith("cannot import: ") or message == "1"), message


def test_recorded_caches_nothing_when_the_log_read_and_wrote_nothing(tmp_path):
    """A headless run whose client sent no breakpoints: every call's cache_read and cache_creation
    are zero. ``recorded`` must reproduce that (it read 88% from cache on such a log before)."""
    lines = [init()]
    for k in range(6):
        lines += [assistant(f"msg_{k}", [tool_use(f"toolu_{k}")], usage(8_000 + 900 * k, 0, 0)),
                  result(f"toolu_{k}", "x" * 3_000)]
    lines += [assistant("msg_end", [{"type": "text", "text": "Done."}], usage(14_000, 0, 0)), final()]
    (run,) = load(write(tmp_path / "uncached.stream.jsonl", lines))
    recorded, tail = replay(run, "recorded"), replay(run, "tail")
    assert len(recorded.calls) == 7 and recorded.cache_read_share == 0
    assert sum(c.cache_creation_input_tokens for c in recorded.calls) == 0
    assert any("recorded places none" in n for n in recorded.notes)
    assert tail.cache_read_share > 0.5  # the other strategies still place the course's breakpoints


def test_a_single_call_log_is_priced_as_its_own_usage_says(tmp_path):
    """Two one-call logs of equal prompt tokens were priced $0.197 against $0.108: the replay billed
    its estimate of the answer's length against the log's 8 output tokens. A session file's usage
    line carries the output count of the stream's first event (8 tokens here), a placeholder: the
    call's output is what it wrote, estimated from its text, for the log's own row and the replay's
    alike; its prompt tokens are the logged ones."""
    summary = "The session so far: " + "the parser was rewritten and its tests pass. " * 300
    path = write(tmp_path / "one.jsonl", [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "Summarize the session. " * 50}},
        {"type": "assistant", "sessionId": "s", "message": {"model": "claude-opus-4-6", "id": "msg_1", "role": "assistant",
                                                             "content": [{"type": "text", "text": summary}],
                                                             "usage": usage(3, 8_681, 164_830, out=8)}}])
    (run,) = load(path)
    replayed = replay(run, "recorded")
    logged = run.calls[0].usage.cost("claude-opus-4-6")
    assert replayed.calls[0].prompt_tokens == run.calls[0].usage.prompt_tokens
    assert run.calls[0].usage.output == -(-len(summary) // 4) == replayed.calls[0].output_tokens
    assert replayed.cost == pytest.approx(logged, rel=0.01) and run.output_from == "estimated"
