"""crewAI: one ``Agent`` with a tool in a one-task ``Crew``, its ``LLM`` on the native Anthropic
provider (``anthropic/MODEL``, ``base_url``), against plain ``serve``; the crew kicked off twice, the
second task asking again. A throwaway home folder; telemetry off (``CREWAI_DISABLE_TELEMETRY``, ``OTEL_SDK_DISABLED``)."""

from __future__ import annotations

import os
import tempfile

os.environ["HOME"] = tempfile.mkdtemp(prefix="interop-crewai-")  # crewAI keeps its stores under the home folder
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")

from common import API_KEY, FOLLOW_UP, TASK, main, weather  # noqa: E402
from crewai import LLM, Agent, Crew, Task  # noqa: E402
from crewai.tools import tool  # noqa: E402

CALLS = []


@tool("get_weather")
def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(city)
    return weather(city)


def run(model: str, base_url: str) -> int:
    CALLS.clear()
    llm = LLM(model=f"anthropic/{model}", base_url=base_url, api_key=API_KEY)
    agent = Agent(role="assistant", goal="Answer with the tool.", backstory="A careful assistant.", llm=llm,
                  tools=[get_weather], max_iter=6, verbose=False)
    for prompt in (TASK, FOLLOW_UP):
        task = Task(description=prompt, expected_output="the weather", agent=agent)
        Crew(agents=[agent], tasks=[task], verbose=False).kickoff()
    return len(CALLS)


if __name__ == "__main__":
    main(run)
