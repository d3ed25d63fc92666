"""What today's clients send, accepted where the real API accepts it and refused where it refuses it
(issue 23). Each test names its source; each fails on the emulator before the fix.

[EPM]  https://platform.claude.com/docs/en/build-with-claude/effort-per-message
[PTC]  github.com/router-for-me/CLIProxyAPI pull 5563 and issue 5738: live probes of
       ``per-turn-control-2026-07-01`` against api.anthropic.com
[VER]  the API versioning page (platform.claude.com/docs/en/api/versioning) and the write-ups that
       agree with it (API-2026.md section 10)
"""

from __future__ import annotations

import json

import anthropic
import pytest

from minimal_runtime.emulator import Emulator

CURRENT = ["claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5", "claude-fable-5-1"]
NEW, OLD = "2026-10-21", "2023-06-01"


def post(emu: Emulator, body: dict, *, version: str | None = NEW, betas: str = "", path: str = "/v1/messages",
         auth: dict | None = None) -> tuple[int, dict]:
    """One raw request, as a client that is not this SDK sends it."""
    headers = {"content-type": "application/json", **({"x-api-key": "k"} if auth is None else auth)}
    if version is not None:
        headers["anthropic-version"] = version
    if betas:
        headers["anthropic-beta"] = betas
    status, _, payload = emu.handle("POST", path, json.dumps(body).encode(), headers)
    return status, json.loads(payload)


def first_request(model: str) -> dict:
    """The shape of Claude Code's first request: a user turn, then an effort-only system entry."""
    return {"model": model, "max_tokens": 256, "thinking": {"type": "adaptive"},
            "output_config": {"effort": "medium"},
            "messages": [{"role": "user", "content": "list the files"},
                         {"role": "system", "content": [], "output_config": {"effort": "medium"}}]}


# -- item 1: per-turn-control-2026-07-01 ------------------------------------------------------------

@pytest.mark.parametrize("model", CURRENT)
def test_claude_codes_per_turn_control_beta_admits_per_message_output_config(model):
    """[PTC]: with the beta, 200; the same body without it, 400 `messages.1.output_config: Extra inputs`."""
    emu = Emulator(model=model)
    status, body = post(emu, first_request(model), betas="claude-code-20250219,per-turn-control-2026-07-01")
    assert status == 200, body
    status, body = post(emu, first_request(model), betas="claude-code-20250219")
    assert status == 400 and body["error"]["message"] == "messages.1.output_config: Extra inputs are not permitted"


def test_per_message_output_config_takes_effort_only():
    """[EPM] and the SDK's BetaSystemMessageOutputConfigParam: effort only, format stays top-level."""
    emu = Emulator(model="claude-sonnet-5-5")
    request = first_request("claude-sonnet-5-5")
    for config, field in (({"effort": "huge"}, "effort"), ({"effort": "low", "task_budget": {}}, "task_budget")):
        request["messages"][1]["output_config"] = config
        status, body = post(emu, request, betas="per-turn-control-2026-07-01")
        assert status == 400 and body["error"]["message"].startswith(f"messages.1.output_config.{field}"), body
