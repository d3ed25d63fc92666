"""langchain-anthropic: ChatAnthropic with a bound tool, the tool loop written out as its docs show;
then a structured-output call (``with_structured_output(method="json_schema")``: the API's
``output_config.format``), whose answer must parse into the schema's class."""

from common import API_KEY, FOLLOW_UP, TASK, main, weather
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel


class Forecast(BaseModel):
    city: str
    sunny: bool


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return weather(city)


def run(model: str, base_url: str) -> int:
    llm = ChatAnthropic(model=model, base_url=base_url, api_key=API_KEY, max_tokens=4096).bind_tools([get_weather])
    history, calls = [], 0
    for prompt in (TASK, FOLLOW_UP):
        history.append(HumanMessage(prompt))
        while True:
            answer = llm.invoke(history)
            history.append(answer)
            if not answer.tool_calls:
                break
            for call in answer.tool_calls:
                calls += 1
                history.append(ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"]))
    structured = ChatAnthropic(model=model, base_url=base_url, api_key=API_KEY, max_tokens=1024) \
        .with_structured_output(Forecast, method="json_schema")
    forecast = structured.invoke("Tomorrow's forecast for Paris, as the schema asks.")
    if not isinstance(forecast, Forecast):
        raise TypeError(f"with_structured_output answered {type(forecast).__name__}, not Forecast")
    return calls


main(run)
