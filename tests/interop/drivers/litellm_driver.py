"""litellm: completion() in the OpenAI format against an Anthropic base URL; the assistant message
it returns (thinking blocks included) goes back as it came."""

import json

import litellm
from common import API_KEY, FOLLOW_UP, TASK, TOOL_DESCRIPTION, TOOL_NAME, TOOL_SCHEMA, main, weather

TOOLS = [{"type": "function", "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": TOOL_SCHEMA}}]


def run(model: str, base_url: str) -> int:
    history, calls = [], 0
    for prompt in (TASK, FOLLOW_UP):
        history.append({"role": "user", "content": prompt})
        while True:
            response = litellm.completion(model=f"anthropic/{model}", api_base=base_url, api_key=API_KEY,
                                          messages=history, tools=TOOLS, max_tokens=4096)
            message = response.choices[0].message
            history.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                break
            for call in message.tool_calls:
                calls += 1
                result = weather(**json.loads(call.function.arguments))
                history.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return calls


main(run)
