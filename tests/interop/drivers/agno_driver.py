"""agno's ``Agent`` with its ``Claude`` model (the Anthropic SDK underneath), against plain ``serve``:
two runs of one agent, the second with the first in its history (``add_history_to_context``)."""

from __future__ import annotations

from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.anthropic import Claude
from common import API_KEY, FOLLOW_UP, TASK, main, weather


def get_weather(city: str) -> str:
    """The weather in a city."""
    return weather(city)


def run(model: str, base_url: str) -> int:
    agent = Agent(model=Claude(id=model, api_key=API_KEY, client_params={"base_url": base_url}), tools=[get_weather],
                  db=InMemoryDb(), add_history_to_context=True)
    tools = 0
    for prompt in (TASK, FOLLOW_UP):
        result = agent.run(prompt, session_id="interop")
        if getattr(result, "status", None) is not None and str(result.status).lower().endswith("error"):
            raise RuntimeError(f"agno: {result.content}")
        tools += len(result.tools or [])
    return tools


if __name__ == "__main__":
    main(run)
