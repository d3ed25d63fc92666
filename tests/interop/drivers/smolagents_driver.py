"""smolagents' ToolCallingAgent on its default path (LiteLLM's Anthropic route), against plain
``serve``: the loop ends only when the model calls ``final_answer``. A run that ends at
``max_steps`` instead (the agent then asks for an answer without tools) is a failure."""

from __future__ import annotations

from common import API_KEY, TASK, main, weather
from smolagents import LiteLLMModel, ToolCallingAgent, tool


@tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    return weather(city)


def run(model: str, base_url: str) -> int:
    agent = ToolCallingAgent(tools=[get_weather], model=LiteLLMModel(model_id=f"anthropic/{model}", api_base=base_url,
                                                                     api_key=API_KEY), max_steps=8, verbosity_level=0)
    result = agent.run(TASK, return_full_result=True)
    calls = [c for step in result.steps for c in step.get("tool_calls") or []]
    names = [c["function"]["name"] for c in calls]
    if result.state != "success" or not names or names[-1] != "final_answer":
        raise RuntimeError(f"the loop did not end by final_answer: state {result.state}, tools called {names}")
    return len(names) - 1  # the tools it ran before the final answer


if __name__ == "__main__":
    main(run)
