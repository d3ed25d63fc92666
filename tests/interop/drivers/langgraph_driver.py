"""LangGraph's prebuilt ReAct agent (``create_react_agent``) over langchain-anthropic's ``ChatAnthropic``,
against plain ``serve``: two turns, the second sent with the first's messages."""

from __future__ import annotations

from common import API_KEY, FOLLOW_UP, TASK, main, weather
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return weather(city)


def run(model: str, base_url: str) -> int:
    agent = create_react_agent(ChatAnthropic(model=model, base_url=base_url, api_key=API_KEY), [get_weather])
    state = agent.invoke({"messages": [("user", TASK)]})
    state = agent.invoke({"messages": [*state["messages"], ("user", FOLLOW_UP)]})
    return sum(isinstance(m, ToolMessage) for m in state["messages"])


if __name__ == "__main__":
    main(run)
