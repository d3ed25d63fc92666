"""Griptape 1.13 as its docs start an agent on Anthropic: an ``Agent`` whose prompt driver is
``AnthropicPromptDriver`` (griptape[drivers-prompt-anthropic]; the SDK pointed at serve by
``ANTHROPIC_BASE_URL``) with one tool of its own (a ``BaseTool`` with an ``@activity``), run twice (its
conversation memory keeps the first turn).

Model: claude-sonnet-4-6. On claude-sonnet-5-5 the API thinks by default (adaptive, display omitted) and
griptape fails on the answer's ``thinking`` block ("Unsupported message content type: thinking"), as it
would against the API; it sends ``temperature`` to 4.6, so the SDK is the 0.x one (requirements.in).
Its own record: the ``FinishPromptEvent`` it publishes after each call (``input_token_count``,
``output_token_count``), read with an ``EventListener`` on its ``EventBus``, as its docs count tokens.
"""

from __future__ import annotations

import os

from common import API_KEY, FOLLOW_UP, TASK, main, weather
from griptape.artifacts import ErrorArtifact, TextArtifact
from griptape.drivers.prompt.anthropic import AnthropicPromptDriver
from griptape.events import EventBus, EventListener, FinishPromptEvent
from griptape.structures import Agent
from griptape.tools import BaseTool
from griptape.utils.decorators import activity
from schema import Literal, Schema


class WeatherTool(BaseTool):
    @activity(config={"description": "The weather in a city.",
                      "schema": Schema({Literal("city", description="the city's name"): str})})
    def get_weather(self, params: dict) -> TextArtifact:
        return TextArtifact(weather(params["values"]["city"]))


def run(model: str, base_url: str) -> dict:
    os.environ["ANTHROPIC_BASE_URL"] = base_url
    finished: list[FinishPromptEvent] = []
    EventBus.add_event_listener(EventListener(finished.append, event_types=[FinishPromptEvent]))
    agent = Agent(prompt_driver=AnthropicPromptDriver(model=model, api_key=API_KEY), tools=[WeatherTool()])
    for task in (TASK, FOLLOW_UP):
        agent.run(task)
        if isinstance(agent.output, ErrorArtifact):  # the agent keeps a failure as its output, and returns
            raise RuntimeError(f"the agent ended with an error: {agent.output.value}")
    tools = sum(len(task.subtasks) for task in agent.tasks)  # the last run's tool subtasks
    return {"tool_calls": tools,
            "usage": {"input_tokens": sum(int(e.input_token_count or 0) for e in finished),
                      "output_tokens": sum(int(e.output_token_count or 0) for e in finished)},
            "record": f"{len(finished)} FinishPromptEvents' token counts"}


if __name__ == "__main__":
    main(run)
