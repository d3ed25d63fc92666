"""pydantic-ai's side of ``loop_speed.py``: one run of its agent loop against the same instant server.

Run by the interop venv's interpreter (``.interop/venv``: pydantic-ai-slim 2.68.0 and the same
``anthropic``), never the project's: pydantic-ai is not a dependency of the project. Imports nothing
of the project. Prints one JSON object: the arrival time of every request, and the versions.

    python loop_speed_pydantic_ai.py MODEL TURNS
"""

from __future__ import annotations

import json
import sys
import time

import anthropic
import httpx2

PAGE = "lorem ipsum " * 41  # about 500 characters, as loop_speed.py's tool returns
SYSTEM = "You read the pages one by one and keep notes."


def message(n: int, turns: int, model: str) -> dict:
    """The instant server's n-th answer (loop_speed.py's server gives the same). A model of the 5.x
    generation answers with a thinking block first, as they do."""
    thinking = [{"type": "thinking", "thinking": "The next page.", "signature": "s" * 200}] if "-5-" in model else []
    if n >= turns:
        content = [{"type": "text", "text": "All pages read."}]
    else:
        content = [*thinking, {"type": "text", "text": "next page"},
                   {"type": "tool_use", "id": f"toolu_{n:06d}", "name": "fetch", "input": {"url": f"https://x.test/{n}"}}]
    return {"id": f"msg_{n:06d}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "end_turn" if n >= turns else "tool_use", "stop_sequence": None,
            "usage": {"input_tokens": 30, "cache_read_input_tokens": 100_000, "cache_creation_input_tokens": 150,
                      "output_tokens": 20}}


def answer(n: int, turns: int, model: str, stream: bool = False) -> bytes:
    """The n-th answer as a JSON body, or (``stream``) as the event stream the API sends for it."""
    whole = message(n, turns, model)
    if not stream:
        return json.dumps(whole).encode()
    events = [("message_start", {"type": "message_start", "message": {**whole, "content": [], "stop_reason": None}})]
    for i, block in enumerate(whole["content"]):
        kind = block["type"]
        start = {"thinking": {"type": "thinking", "thinking": ""}, "text": {"type": "text", "text": ""},
                 "tool_use": {**block, "input": {}}}[kind]
        deltas = {"thinking": [{"type": "thinking_delta", "thinking": block.get("thinking")},
                               {"type": "signature_delta", "signature": block.get("signature")}],
                  "text": [{"type": "text_delta", "text": block.get("text")}],
                  "tool_use": [{"type": "input_json_delta", "partial_json": json.dumps(block.get("input"))}]}[kind]
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"],
                                                                        "stop_sequence": None},
                                     "usage": {"output_tokens": 20}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def respond(body: bytes, n: int, turns: int, model: str) -> httpx2.Response:
    """The server's answer to a request body: JSON, or an event stream when the request asks for one."""
    stream = json.loads(body).get("stream") is True
    return httpx2.Response(200, content=answer(n, turns, model, stream),
                           headers={"content-type": "text/event-stream" if stream else "application/json"})


def main(model: str, turns: int) -> None:
    import pydantic_ai
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.usage import UsageLimits

    arrivals: list[float] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        arrivals.append(time.process_time())
        return respond(request.read(), len(arrivals) - 1, turns, model)

    client = anthropic.AsyncAnthropic(api_key="x", base_url="http://instant.invalid",
                                      http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))

    def fetch(url: str) -> str:
        """Fetch a page."""
        return PAGE

    agent = Agent(AnthropicModel(model, provider=AnthropicProvider(anthropic_client=client)), tools=[fetch],
                  instructions=SYSTEM)
    result = agent.run_sync("Read the pages.", usage_limits=UsageLimits(request_limit=None))
    assert result.output == "All pages read.", result.output
    print(json.dumps({"arrivals": arrivals, "pydantic_ai": pydantic_ai.__version__, "anthropic": anthropic.__version__}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
