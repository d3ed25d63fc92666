"""mirascope 2's default loop (``@llm.call`` with a tool, then ``execute_tools`` and ``resume`` until
the model calls none), against plain ``serve``: two turns, the second resumed after the first's
answer. Its Anthropic provider moves a ``cache_control`` breakpoint to the last message each call
and clears the one before by setting it to null, which the API takes (it stopped at call 3 while
serve refused the null, issue 51 item 1)."""

from __future__ import annotations

from common import API_KEY, FOLLOW_UP, TASK, main, weather
from mirascope import llm


@llm.tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return weather(city)


def run(model: str, base_url: str) -> int:
    llm.register_provider("anthropic", api_key=API_KEY, base_url=base_url)

    @llm.call(f"anthropic/{model}", tools=[get_weather])
    def ask() -> str:
        return TASK

    tools, response = 0, ask()
    for turn in range(2):
        while response.tool_calls:
            outputs = response.execute_tools()
            tools += len(outputs)
            response = response.resume(outputs)
        if turn == 0:
            response = response.resume(FOLLOW_UP)
    return tools


if __name__ == "__main__":
    main(run)
