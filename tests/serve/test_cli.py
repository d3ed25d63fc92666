"""``python -m minimal_runtime serve`` as a user starts it: one subprocess, the real SDK, SIGINT."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import uuid

import anthropic
import pytest


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


# -- the mistakes a newcomer makes: one line each, and nothing served ------------------------------------

class Started(Exception):
    """Raised instead of listening: a check that should have refused the command let it start."""


def never_listen(*args, **kwargs):
    raise Started


@pytest.mark.parametrize("command", [["serve"], ["view", "calls.jsonl"]])
@pytest.mark.parametrize("port", ["99999", "-1", "abc"])
def test_a_port_out_of_range_is_a_usage_error_not_the_sockets_traceback(command, port, capsys):
    from minimal_runtime.__main__ import main
    with pytest.raises(SystemExit) as stopped:  # was: OverflowError from bind(), a traceback
        main([*command, "--port", port])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        f"argument --port: '{port}' is not a port: a number from 0 to 65535 (0: any free port)")


@pytest.mark.parametrize("option, says", [
    (["--thread-ttl", "-5"], "serve: --thread-ttl must be a number of seconds, 0 or more, not -5.0"),
    (["--tool-rounds", "-1"], "serve: --tool-rounds must be 0 or more, not -1"),
    (["--account-created", "yesterday"], "serve: --account-created 'yesterday': expected a date, YYYY-MM-DD"),
    # was: started, then every call a 502; and the value is not echoed (user:password@host has no scheme to parse)
    (["--upstream", "user:secret@api.anthropic.com"], "serve: --upstream must be an http:// or https:// URL, e.g. "
                                                      "https://api.anthropic.com"),
])
def test_serve_refuses_a_negative_setting_or_a_date_it_cannot_read_before_it_listens(option, says, monkeypatch):
    from minimal_runtime import serve
    from minimal_runtime.__main__ import main
    monkeypatch.setattr(serve, "serve_http", never_listen)  # accepted, the old code served until Ctrl-C
    with pytest.raises(SystemExit) as stopped:
        main(["serve", *option])
    assert stopped.value.code == says


def test_an_unknown_default_model_is_one_line_of_serve_not_a_python_warning(monkeypatch, capsys):
    from minimal_runtime import serve
    from minimal_runtime.__main__ import main
    monkeypatch.setattr(serve, "serve_http", never_listen)
    name = f"my-local-model-{uuid.uuid4().hex}"  # the table warns once per name in a process: one never seen
    with pytest.raises(Started):
        main(["serve", "--model", name])
    assert capsys.readouterr().err == (f"serve: note: model '{name}' is not in the model table: no prefill, no "
                                       "known cache minimum or window, cost unknown\n")


@pytest.mark.parametrize("command", [["serve"], ["view", "LOG"]])
def test_an_address_not_of_this_machine_names_host_and_a_taken_port_names_port(command, tmp_path, monkeypatch):
    import errno
    from contextlib import contextmanager
    from minimal_runtime import serve
    from minimal_runtime.__main__ import main
    from minimal_runtime.emulator import server
    log = tmp_path / "calls.jsonl"
    log.write_text(json.dumps({"n": 1, "method": "POST", "path": "/v1/messages", "status": 200,
                               "request": {"model": "claude-sonnet-5-5", "messages": []}}) + "\n")
    command = [str(log) if word == "LOG" else word for word in command]
    for code, says in ((errno.EADDRNOTAVAIL, "give an address of this machine with --host"),
                       (errno.EADDRINUSE, "pick another with --port (0: any free port)")):
        @contextmanager
        def refused(*args, **kwargs):
            raise OSError(code, "no")
            yield  # a context manager, as serve_http is
        monkeypatch.setattr(serve, "serve_http", refused)
        monkeypatch.setattr(server, "serve", refused)  # view imports it where it runs
        with pytest.raises(SystemExit) as stopped:
            main([*command, "--host", "10.9.9.9"])
        assert str(stopped.value.code).endswith(f"cannot listen on 10.9.9.9:{8765 if command == ['serve'] else 8766}: "
                                                f"no; {says}" + (" (default 127.0.0.1)" if code == errno.EADDRNOTAVAIL
                                                                 else ""))
