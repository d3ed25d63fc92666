"""``python -m minimal_runtime serve`` as a user starts it: one subprocess, the real SDK, SIGINT."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import anthropic


def test_serve_prints_the_environment_one_line_per_call_and_a_summary_on_sigint(tmp_path):
    script = tmp_path / "turns.jsonl"
    script.write_text('{"type": "tool_use", "name": "read_file", "input": {"path": "a.txt"}}\n"done"\n')
    log = tmp_path / "calls.jsonl"
    server = subprocess.Popen([sys.executable, "-m", "minimal_runtime", "serve", "--port", "0", "--model",
                               "claude-haiku-5-5", "--script", str(script), "--log", str(log)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = [server.stdout.readline()]
        while not banner[-1].startswith("one line per call") and banner[-1]:
            banner.append(server.stdout.readline())
        assert banner[0].startswith("serve: the offline emulator at http://127.0.0.1:"), banner + [server.stderr.read()]
        assert "SIMULATED" in banner[0] and "script" in banner[0]
        url = banner[1].strip().removeprefix("export ANTHROPIC_BASE_URL=")
        assert banner[2].startswith("  export ANTHROPIC_API_KEY=")
        assert f"base URL without /v1: {url}  (the Anthropic SDKs" in banner[3]
        assert f"base URL with /v1:    {url}/v1  (the Vercel AI SDK" in banner[4]
        client = anthropic.Anthropic(base_url=url, api_key="dummy")
        messages = [{"role": "user", "content": "go"}]
        first = client.messages.create(model="claude-haiku-5-5", max_tokens=100, messages=messages)
        assert first.stop_reason == "tool_use"
        messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[-1].id,
                                                   "content": "text"}]}]
        assert client.messages.create(model="claude-haiku-5-5", max_tokens=100, messages=messages).content[-1].text == "done"
        lines = [server.stdout.readline().rstrip("\n") for _ in range(2)]
    finally:
        server.send_signal(signal.SIGINT)
        rest, errors = server.communicate(timeout=30)
    assert server.returncode == 0, errors
    assert lines[0].startswith("#1 claude-haiku-5-5 200 | in ") and lines[1].startswith("#2 claude-haiku-5-5 200 | in ")
    assert "prefix ok (1 thinking sent back)" in lines[1]
    assert rest.strip().startswith("summary: 2 calls, 0 refused, cache-read share ")
    assert [json.loads(line)["n"] for line in log.read_text().splitlines()] == [1, 2]
