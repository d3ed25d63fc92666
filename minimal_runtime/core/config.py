"""An agent's settings, and the options every request sends besides its context, checked against
the model table: a setting the API would refuse for the model (``max_tokens`` over its max output, a
thinking mode it does not take, a forced ``tool_choice``) is refused here, when the agent is made
or reconfigured, before any hook runs or any call is paid for.

The request options are the SDK's own request types (``anthropic.types.beta``), checked as given
and sent as given: a key the SDK does not know is an error, not a silent drop.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from anthropic.types.beta import (BetaContextManagementConfigParam, BetaMetadataParam, BetaOutputConfigParam,
                                  BetaThinkingConfigParam)
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from ..provider.models import model_spec


def _shaped(kind: Any) -> Any:
    """A Messages API dict checked against the SDK's type for it (no unknown keys), kept as given."""
    shape = create_model("Shape", __config__=ConfigDict(extra="forbid"), value=(kind, ...))

    def check(value: dict) -> dict:
        try:
            shape(value=value).model_dump(mode="json")  # dumping walks the lists the SDK's types check lazily
        except ValidationError as e:
            raise ValueError("; ".join(f"{'.'.join(map(str, err['loc'][1:]))}: {err['msg']}" for err in e.errors()))
        return value
    return Annotated[dict, AfterValidator(check)]


class RequestOptions(BaseModel):
    """What every request sends besides its context and ``max_tokens``, as ``messages.create`` takes it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    thinking: _shaped(Annotated[BetaThinkingConfigParam, Field(discriminator="type")]) | None = None
    output_config: _shaped(BetaOutputConfigParam) | None = None  # effort, format, task_budget
    metadata: _shaped(BetaMetadataParam) | None = None
    service_tier: Literal["auto", "standard_only"] | None = None
    context_management: _shaped(BetaContextManagementConfigParam) | None = None
    betas: list[str] = Field(default_factory=list, description="anthropic-beta values, besides the layout's own")


class AgentConfig(BaseModel):
    """An agent's settings: plain values, validated, and checked against the model's facts. Frozen:
    ``Agent.configure`` makes a new one, checked the same way. Collaborators (client, tools, hooks,
    store, layout) are arguments of ``Agent``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="the model id sent with every request; its facts come from the model table")
    system: str | list[dict] = Field(default="", description="the system prompt: built once, resent byte-identical")
    max_steps: int = Field(default=50, description="model calls allowed for one user message (one run)")
    max_cost_usd: float | None = Field(default=None, gt=0, description="the record's bill (``Agent.bill``) a run "
                                       "may reach: no call is sent whose most it could cost would pass it")
    max_seconds: float | None = Field(default=None, gt=0, description="wall-clock seconds from a run's task after "
                                      "which it sends no more calls (across resumes: the task's time is recorded)")
    # Thinking counts toward it, and current models think adaptively at high effort by default: at 4,096
    # the reasoning alone can fill it and the turn ends with no answer (a client's bug report, openclaw
    # #97176). 16,000 stays under what the SDK sends without streaming (STREAM_ABOVE in agent.py).
    max_tokens: int = Field(default=16_000, description="the per-call output cap sent to the API")
    max_tool_output: int = Field(default=100_000, description="characters of one tool output the history keeps; "
                                 "the rest is cut with a note (the store keeps it whole; an offloader does better)")
    tool_choice: dict | None = Field(default=None, description="sent as is; changing it mid-run invalidates the "
                                                                "messages cache, so it is a setting, not a lever")
    name: str = Field(default="agent", description="the agent's role name, for logs and for hooks that "
                                                   "tell agents apart")
    check_append_only: bool = Field(default=False, description="debug: compare every request with the previous "
                                                               "one and log where it is not an append-only extension")
    request: RequestOptions = Field(default_factory=RequestOptions, description="thinking, output_config ...")

    @classmethod
    def of(cls, **settings: Any) -> "AgentConfig":
        """The settings and the request options as one set of keywords (``thinking=`` is an option)."""
        options = {k: settings.pop(k) for k in list(settings) if k in RequestOptions.model_fields}
        return cls(**settings, request=RequestOptions(**options))

    def keywords(self) -> dict[str, Any]:
        """What ``of`` takes to make this config again."""
        return {**self.model_dump(exclude={"request"}), **self.request.model_dump(exclude_defaults=True)}

    @model_validator(mode="after")
    def _fits_the_model(self) -> "AgentConfig":
        spec = model_spec(self.model)
        if spec.max_output is not None and self.max_tokens > spec.max_output:
            raise ValueError(f"max_tokens {self.max_tokens:,} is over the {spec.max_output:,} tokens {spec.id} can write")
        mode = (self.request.thinking or {}).get("type")
        if mode in spec.thinking_refused:
            raise ValueError(f"{spec.id} does not take thinking type {mode!r} (it refuses {', '.join(spec.thinking_refused)})")
        if (self.tool_choice or {}).get("type") in ("any", "tool") and spec.rejects_forced_tool_choice:
            raise ValueError(f"{spec.id} rejects a forced tool_choice ({self.tool_choice}); "
                             "use 'auto' and mask the tools instead")
        return self
