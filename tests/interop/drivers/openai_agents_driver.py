"""The OpenAI Agents SDK with its LiteLLM model (``LitellmModel``, Anthropic route), against plain
``serve``: two runs, the second given the first's items as input."""

from __future__ import annotations

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.extensions.models.litellm_model import LitellmModel
from common import API_KEY, FOLLOW_UP, TASK, main, weather

set_tracing_disabled(True)  # no traces sent anywhere


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return weather(city)


def run(model: str, base_url: str) -> int:
    agent = Agent(name="assistant", instructions="Answer with the tool.", tools=[get_weather],
                  model=LitellmModel(model=f"anthropic/{model}", base_url=base_url, api_key=API_KEY))
    first = Runner.run_sync(agent, TASK)
    second = Runner.run_sync(agent, [*first.to_input_list(), {"role": "user", "content": FOLLOW_UP}])
    return sum(item.type == "tool_call_output_item" for item in [*first.new_items, *second.new_items])


if __name__ == "__main__":
    main(run)
