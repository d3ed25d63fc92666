"""DeepSeek's own prices, for the runs of mini-swe-agent (and other litellm agents) on DeepSeek's API:
what DeepSeek billed each call on the day, and at the hour, it was made.

DeepSeek bills three kinds of token per million: input that hit its context cache, input that
missed it, and output (reasoning included). There is no write premium: a miss is billed once at
the miss price, so a replay's cache writes and uncached input are both misses here.

The lists, in UTC, for the API names ``deepseek-chat`` and ``deepseek-reasoner`` ($ per MTok, hit /
miss / output):

- from 2025-02-08 16:00 (the end of DeepSeek-V3's launch offer: 2025-02-08 24:00 Beijing time on the
  Chinese pricing page, as archived by apifox.com): chat 0.07 / 0.27 / 1.10, reasoner 0.14 / 0.55 /
  2.19 (api-docs.deepseek.com/quick_start/pricing-details-usd). The launch offer's own prices are not
  here: a run before that is priced at this list, and said;
- from 2025-02-26 16:30, the same by day and a night discount from 16:30 to 00:30 UTC, both models
  0.035 / 0.135 / 0.55 (api-docs.deepseek.com/quick_start/pricing, "STANDARD PRICE (UTC 00:30-16:30)",
  "DISCOUNT PRICE (UTC 16:30-00:30)"; first night 00:30-08:30 Beijing time on 2025-02-27, reported
  by techgethub.com);
- from 2025-09-05 16:00, both models 0.07 / 0.56 / 1.68 and no night discount (the same page:
  "Starting from 16:00 UTC Time on Sept 5th, 2025, we will apply the following price list and
  cancel the nighttime discount");
- from 2025-09-29, DeepSeek-V3.2-Exp's "API prices drop 50%+, effective immediately" (DeepSeek's
  API news of that day, as reported by skywork.ai): 0.028 / 0.28 / 0.42, the pricing page's list for
  V3.2 as quoted by benchlm.ai in April 2026. The held-out mini-swe-agent log of 2026-04-13 (188
  calls on deepseek-chat) prices its own usage at these to the fifth decimal: $0.302535.
  [UNCERTAIN] the hour of the change on 2025-09-29 is not given: that whole day is priced so;
- from 2026-04-24, both names route to DeepSeek-V4-Flash (V4 preview: "currently routing to
  deepseek-v4-flash non-thinking/thinking", as quoted by developersdigest.tech and webscraft.org):
  its 0.028 / 0.14 / 0.28, and from 2026-04-26 a cache hit at a tenth of that, 0.0028 (DeepSeek's
  announcement of that day as reported by chaobro.com; V4-Flash's 0.0028 / 0.14 / 0.28 as listed by
  chatforest.com). The names were retired on 2026-07-24 at 15:59 UTC: a call dated later is priced
  at the last list, and said. [UNCERTAIN] peak-hour pricing, announced for V4's official release in
  mid-July 2026, is not applied.

Searched for on 2026-12-03 (the pricing pages of those dates, and reports of each change).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

NAMES = ("deepseek-chat", "deepseek-reasoner")


@dataclass(frozen=True)
class Rates:
    """$ per million tokens of one DeepSeek price list, for one model at one hour."""

    hit: float
    miss: float
    output: float
    list: str  # which list, as the note names it

    def dollars(self, hit: int, miss: int, output: int) -> float:
        return (hit * self.hit + miss * self.miss + output * self.output) / 1e6


def _utc(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


# (from, list name, {model: (hit, miss, output)}, the night discount's rates or None)
LISTS = [
    (_utc("2025-02-08T16:00"), "the list of 2025-02-08 (DeepSeek-V3 and R1)",
     {"deepseek-chat": (0.07, 0.27, 1.10), "deepseek-reasoner": (0.14, 0.55, 2.19)}, None),
    (_utc("2025-02-26T16:30"), "the list of 2025-02-26 (V3 and R1, night discount 16:30-00:30 UTC)",
     {"deepseek-chat": (0.07, 0.27, 1.10), "deepseek-reasoner": (0.14, 0.55, 2.19)}, (0.035, 0.135, 0.55)),
    (_utc("2025-09-05T16:00"), "the list of 2025-09-05 (DeepSeek-V3.1)",
     {"deepseek-chat": (0.07, 0.56, 1.68), "deepseek-reasoner": (0.07, 0.56, 1.68)}, None),
    (_utc("2025-09-29T00:00"), "the list of 2025-09-29 (DeepSeek-V3.2)",
     {"deepseek-chat": (0.028, 0.28, 0.42), "deepseek-reasoner": (0.028, 0.28, 0.42)}, None),
    (_utc("2026-04-24T00:00"), "the list of 2026-04-24 (both names served by DeepSeek-V4-Flash)",
     {"deepseek-chat": (0.028, 0.14, 0.28), "deepseek-reasoner": (0.028, 0.14, 0.28)}, None),
    (_utc("2026-04-26T00:00"), "the list of 2026-04-26 (V4-Flash, cache hits at a tenth)",
     {"deepseek-chat": (0.0028, 0.14, 0.28), "deepseek-reasoner": (0.0028, 0.14, 0.28)}, None),
]
RETIRED_AT = _utc("2026-07-24T15:59")


def api_name(model: str | None) -> str | None:
    """The DeepSeek API name a log gives (litellm's ``deepseek/deepseek-chat`` too), or None."""
    name = (model or "").lower().removeprefix("deepseek/")
    return name if name in NAMES else None


def _night(at: float) -> bool:
    """16:30 to 00:30 UTC."""
    moment = datetime.fromtimestamp(at, timezone.utc)
    minutes = moment.hour * 60 + moment.minute
    return minutes >= 16 * 60 + 30 or minutes < 30


def rates(model: str | None, at: float | None) -> Rates | None:
    """What DeepSeek billed ``model`` for a call at ``at`` (seconds since the epoch; None: undated,
    priced at the newest list). None for a model that is not DeepSeek's."""
    name = api_name(model)
    if name is None:
        return None
    start, label, table, night = LISTS[-1] if at is None else \
        next((entry for entry in reversed(LISTS) if entry[0] <= at), LISTS[0])
    if night is not None and _night(at):
        return Rates(*night, label + ", at night")
    return Rates(*table[name], label)


def note(model: str, times: list[float | None]) -> str:
    """Which lists priced a run's calls, and what could not be priced by its own date."""
    used: dict[str, int] = {}
    for at in times:
        label = rates(model, at).list
        used[label] = used.get(label, 0) + 1
    lists = "; ".join(f"{label}: {n} call{'s' * (n != 1)}" for label, n in used.items())
    caveats = []
    if any(at is None for at in times):
        caveats.append("calls the log gives no time for are priced at the newest list")
    if any(at is not None and at < LISTS[0][0] for at in times):
        caveats.append("calls before 2025-02-08 16:00 UTC are priced at that day's list (DeepSeek-V3's launch offer "
                       "is not in the table)")
    if any(at is not None and at >= RETIRED_AT for at in times):
        caveats.append(f"DeepSeek retired {api_name(model)} on 2026-07-24; later calls are priced at the last list")
    return (f"{model} is priced as DeepSeek priced it when each call was made (hit, miss and output per MTok; a "
            f"replay's cache writes are misses, DeepSeek has no write premium): {lists}"
            + "".join(f"; {c}" for c in caveats))
