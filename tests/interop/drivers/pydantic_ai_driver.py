"""pydantic-ai: an Agent with one tool; the follow-up passes the first run's message history."""

from common import API_KEY, FOLLOW_UP, TASK, main, weather
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider


def run(model: str, base_url: str) -> int:
    calls = []

    def get_weather(city: str) -> str:
        """The weather in a city."""
        calls.append(city)
        return weather(city)

    agent = Agent(AnthropicModel(model, provider=AnthropicProvider(api_key=API_KEY, base_url=base_url)),
                  tools=[get_weather])
    first = agent.run_sync(TASK)
    agent.run_sync(FOLLOW_UP, message_history=first.all_messages())
    return len(calls)


main(run)
