"""Google's Agent Development Kit: an ``LlmAgent`` on its LiteLLM model (``LiteLlm``, the route the
ADK documents for Anthropic's API), run by an in-memory ``Runner``, against plain ``serve``: two
turns in one session."""

from __future__ import annotations

import asyncio

from common import API_KEY, FOLLOW_UP, TASK, main, weather
from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types


def get_weather(city: str) -> str:
    """The weather in a city."""
    return weather(city)


async def conversation(model: str, base_url: str) -> int:
    agent = LlmAgent(name="assistant", instruction="Answer with the tool.", tools=[get_weather],
                     model=LiteLlm(model=f"anthropic/{model}", api_base=base_url, api_key=API_KEY))
    sessions = InMemorySessionService()
    runner = Runner(agent=agent, app_name="interop", session_service=sessions)
    session = await sessions.create_session(app_name="interop", user_id="user")
    tools = 0
    for prompt in (TASK, FOLLOW_UP):
        async for event in runner.run_async(user_id="user", session_id=session.id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=prompt)])):
            if event.error_message:
                raise RuntimeError(f"adk: {event.error_code}: {event.error_message}")
            tools += len(event.get_function_responses())
    return tools


def run(model: str, base_url: str) -> int:
    return asyncio.run(conversation(model, base_url))


if __name__ == "__main__":
    main(run)
