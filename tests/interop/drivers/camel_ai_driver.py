"""camel-ai's ``ChatAgent`` on its default path (``ModelFactory.create`` on ``ModelPlatformType.ANTHROPIC``, the
Anthropic SDK underneath, pointed at serve by ``url=``), against plain ``serve``: one agent, two ``step`` calls, its
``FunctionTool`` run by its own loop. ``max_tokens`` is set through ``AnthropicConfig``, as camel's docs do: with
no config camel sends ``"max_tokens": null``, which the API refuses (a 400 serve returns too). Model: claude-sonnet-5-5 (camel takes any model name as a string).

The client's own token record: ``on_request_usage``, which camel calls once per API request with that request's
usage (``prompt_tokens``, ``completion_tokens``) and the response's id."""

from __future__ import annotations

from camel.agents import ChatAgent
from camel.configs import AnthropicConfig
from camel.models import ModelFactory
from camel.toolkits import FunctionTool
from camel.types import ModelPlatformType
from common import API_KEY, FOLLOW_UP, TASK, main, weather


def get_weather(city: str) -> str:
    r"""The weather in a city.

    Args:
        city (str): the city's name
    """
    return weather(city)


def run(model: str, base_url: str) -> dict:
    records: list[dict] = []
    llm = ModelFactory.create(model_platform=ModelPlatformType.ANTHROPIC, model_type=model, api_key=API_KEY,
                              url=base_url, model_config_dict=AnthropicConfig(max_tokens=1024).as_dict())
    agent = ChatAgent("You are a helpful assistant.", model=llm, tools=[FunctionTool(get_weather)],
                      on_request_usage=records.append)
    tools = 0
    for prompt in (TASK, FOLLOW_UP):
        response = agent.step(prompt)
        tools += len(response.info.get("tool_calls") or [])
    usage = [r["request_usage"] for r in records]
    # camel copies the SDK's input_tokens into prompt_tokens (cache reads and writes not added; it sets no marker)
    return {"tool_calls": tools, "record": "ChatAgent on_request_usage, per request",
            "usage": {"input_tokens": sum(u["prompt_tokens"] for u in usage),
                      "output_tokens": sum(u["completion_tokens"] for u in usage)},
            "cost_usd": None, "requests": len(records)}


if __name__ == "__main__":
    main(run)
