"""The fork's own tests: what a forking engineer breaks in the loop, caught offline.

Run: ``python -m unittest test_PKG`` (``fork DEST`` writes this file as ``DEST/test_PKG.py``). It needs
``anthropic`` and ``pydantic`` only (and ``httpx2``, the SDK's own HTTP library): every call goes through the
SDK's own HTTP client to ``Scripted``, a small Messages API server inside it (an httpx transport), so
the SDK's types, headers and errors are real and nothing reaches a network. A scripted answer depends
only on the request, so a call sent again after a kill is answered the same.

With ``ANTHROPIC_BASE_URL`` set (and ``ANTHROPIC_API_KEY``, ``MODEL``), ``LiveSubset`` also runs the
stop statuses, the bill, the breakpoint and append-only against that server; kills and scripted
replies stay offline.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import unittest

import anthropic
import httpx2 as httpx  # the SDK's own HTTP library
from pydantic import BaseModel

from minimal_runtime.core import (Agent, FunctionTool, HookRegistry, MemoryStore, Point, RunStore, load_run,
                                  tool_use_id)
from minimal_runtime.core.store import load

MODELS = ("claude-sonnet-5-5", "claude-haiku-5-5")
TASK = "Add the numbers."


# -- a Messages API server inside the SDK's HTTP client ------------------------------------------------

def _unmarked(value):
    """``value`` without cache markers: what the model reads (a marker is where a cache entry ends)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def arithmetic(request: dict) -> tuple[list[dict], str]:
    """Simulated answers, chosen by the system prompt: ``ramble`` is cut at max_tokens, ``refuse``
    refuses; otherwise two parallel ``add`` calls a round for ``rounds`` rounds (the digit in the
    system prompt, 2 by default), then the answer."""
    system = json.dumps(request.get("system"))
    if "ramble" in system:
        return [{"type": "text", "text": "Let me think about it first. " * 10}], "max_tokens"
    if "refuse" in system:
        return [{"type": "text", "text": "I can't help with that."}], "refusal"
    rounds = next((int(c) for c in system if c.isdigit()), 2)
    results = sum(1 for m in request["messages"] if isinstance(m["content"], list)
                  for b in m["content"] if b.get("type") == "tool_result")
    if results < 2 * rounds:
        digest = hashlib.sha256(json.dumps(_unmarked(request["messages"]), sort_keys=True).encode()).hexdigest()[:16]
        return [{"type": "tool_use", "id": f"toolu_{digest}_{i}", "name": "add", "input": {"a": results + i, "b": 1}}
                for i in (0, 1)], "tool_use"
    return [{"type": "text", "text": f"Done after {results} additions."}], "end_turn"


class Scripted:
    """The server: ``requests`` as sent (bodies), threads held under each response's id (a continue
    is answered over what its thread holds), usage counted from what the model reads."""

    def __init__(self, answer=arithmetic, status: int = 200):
        self.answer, self.status = answer, status
        self.requests: list[dict] = []
        self.conversations: list[dict] = []  # what the model read on each call: the whole request
        self.threads: dict[str, dict] = {}
        self.lose_threads = False  # answer the next continue with thread_not_found

    def client(self) -> anthropic.Anthropic:
        return anthropic.Anthropic(api_key="scripted", base_url="http://scripted.invalid", max_retries=0,
                                   http_client=httpx.Client(transport=httpx.MockTransport(self.handle)))

    def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        if self.status != 200:
            return _error(self.status, "api_error", "scripted failure")
        thread, whole = body.get("thread"), {k: v for k, v in body.items() if k != "thread"}
        if thread and thread["type"] == "continue":
            held = self.threads.get(thread["previous_message_id"])
            if held is None or self.lose_threads:
                self.lose_threads = False
                return _error(404, "not_found_error", "No thread state was found.", "thread_not_found")
            whole = {**held, **whole, "messages": [*held["messages"], *body["messages"]]}
        self.conversations.append(whole)
        content, stop = self.answer(whole)
        number = len(self.conversations)
        reply = {"id": f"msg_scripted_{number:04d}", "type": "message", "role": "assistant", "model": body["model"],
                 "content": content, "stop_reason": stop, "stop_sequence": None,
                 "usage": {"input_tokens": len(json.dumps(_unmarked(whole))) // 4,
                           "output_tokens": len(json.dumps(content)) // 4}}
        if thread:
            self.threads[reply["id"]] = {**whole, "messages": [*whole["messages"], {"role": "assistant", "content": content}]}
        return httpx.Response(200, json=reply)


def _error(status: int, kind: str, message: str, code: str | None = None) -> httpx.Response:
    error = {"type": kind, "message": message, **({"details": {"error_code": code}} if code else {})}
    return httpx.Response(status, json={"type": "error", "error": error})


# -- a run, and a run killed at a boundary ------------------------------------------------------------------

class Killed(BaseException):
    """The process died here (nothing in the loop catches a BaseException that is not an Exception)."""


class DyingStore(MemoryStore):
    """A store that dies right after writing its ``after``-th event, or instead of writing the
    ``before``-th (a call in flight: answered, its reply never stored). Dead, it writes nothing."""

    def __init__(self, events: list[dict] | None = None, after: int = 0, before: int = 0):
        super().__init__()
        for event in events or []:
            super().write({k: v for k, v in event.items() if k != "seq"})
        self.after, self.before, self.dead = after, before, False

    def write(self, event: dict, sync: bool = True) -> None:
        if self.dead or len(self.events()) + 1 == self.before:
            self.dead = True
            raise Killed
        super().write(event, sync)
        if len(self.events()) == self.after:
            self.dead = True
            raise Killed


class Numbers(BaseModel):
    a: int
    b: int


class Run:
    """One task on a scripted server, with a side-effecting tool and a hook at every point, each
    counting its runs; killed and resumed as the same script run again would resume it."""

    POINTS = (Point.START, Point.PRE_LLM_CALL, Point.POST_LLM_CALL, Point.PRE_TOOL_CALL, Point.POST_TOOL_CALL,
              Point.END)

    def __init__(self, model: str = MODELS[0], system: str = "You add.", server: Scripted | None = None, **settings):
        self.model, self.system, self.settings = model, system, settings
        self.server = server or Scripted()
        self.tool_runs: list[str] = []  # each tool's tool_use id, each time it ran
        self.hook_runs: list[tuple] = []  # (point, step, tool_use id), each time a hook ran
        self.ended: list[str] = []

    def agent(self, store, die_in: int = 0) -> Agent:
        def add(numbers: Numbers) -> str:
            self.tool_runs.append(tool_use_id())
            return str(numbers.a + numbers.b)

        def hook(event):
            self.hook_runs.append((event.point.value, event.agent.steps, getattr(event, "tool_call", {}).get("id")))
            if len(self.hook_runs) == die_in:
                raise Killed
            if event.point is Point.PRE_LLM_CALL:
                told = event.agent.state.get("told", 0) + 1
                event.agent.state.set("told", told)
                event.agent.inject_turn_scoped("count", f"Note {told}.")
            if event.point is Point.END:
                self.ended.append(event.result.status)
        hooks = HookRegistry()
        for point in self.POINTS:
            hooks.register(point, hook)
        return Agent(self.server.client(), model=self.model, system=self.system, store=store, hooks=hooks,
                     tools=[FunctionTool("add", "Add two integers.", Numbers, add)], **self.settings)

    def go(self, after: int = 0, before: int = 0, die_in: int = 0):
        store = DyingStore(after=after, before=before)
        try:
            result = self.agent(store, die_in).run(TASK)
        except Killed:
            store = DyingStore(store.events())
            result = self.agent(store).run(TASK)  # the same script again: resumed, not asked twice
        return result, load(store.events())


@functools.cache
def uninterrupted(model: str) -> tuple[Run, object, list[dict]]:
    """The run with no kill, once per model: its counters, its record, its events."""
    run, store = Run(model), DyingStore()
    run.agent(store).run(TASK)
    return run, load(store.events()), store.events()


def bill(saved) -> int:
    return sum(c.input_tokens + c.output_tokens for c in [*saved.calls, *saved.lost_calls])


# -- the tests -----------------------------------------------------------------------------------------------

class StopStatuses(unittest.TestCase):
    def test_every_stop_status_ends_at_the_end_hook_with_its_result(self):
        runs = {"done": Run(), "max_steps": Run(max_steps=1), "truncated": Run(system="You ramble."),
                "refused": Run(system="You refuse."), "error": Run(server=Scripted(status=500))}
        for status, run in runs.items():
            result, saved = run.go()
            self.assertEqual(result.status, status, result.error)
            self.assertEqual(run.ended, [status])  # END once, with the result
            self.assertEqual(saved.status, status)
            self.assertEqual(bool(result.error), status in ("truncated", "refused", "error"))
        self.assertEqual(len(runs["done"].tool_runs), 4)


class Hooks(unittest.TestCase):
    def test_hooks_run_in_registration_order_and_a_raising_one_is_passed_over_with_its_notes(self):
        run = Run()
        agent = run.agent(MemoryStore())

        def half_then_fail(event):
            event.agent.inject_turn_scoped("broken", "Half a note.")
            raise RuntimeError("a bug in a hook")
        agent.hooks.register(Point.PRE_LLM_CALL, half_then_fail)
        agent.hooks.register(Point.PRE_LLM_CALL, lambda e: e.agent.inject_turn_scoped("last", "Read me last."))
        with self.assertLogs(level="WARNING") as logged:
            result = agent.run(TASK)
        self.assertEqual(result.status, "done")
        self.assertIn("hook half_then_fail failed at pre_llm_call: RuntimeError: a bug in a hook", logged.output[0])
        failed = [f for f in agent.hooks.failures if f.point is Point.PRE_LLM_CALL]
        self.assertEqual(len(failed), result.steps)  # logged and skipped on every call: the run went on
        sent = json.dumps(run.server.conversations[0]["messages"])
        self.assertNotIn("Half a note.", sent)
        self.assertLess(sent.index("<!-- count -->"), sent.index("<!-- last -->"))  # the registration order
        points = [p for p, _, _ in run.hook_runs]
        self.assertEqual(points[:3], ["start", "pre_llm_call", "post_llm_call"])
        self.assertEqual(points[3:5], ["pre_tool_call", "post_tool_call"])


class Bill(unittest.TestCase):
    def test_each_call_is_billed_in_the_record_as_the_server_counted_it(self):
        run = Run()
        with tempfile.TemporaryDirectory() as folder:
            store = RunStore(folder)
            agent = run.agent(store)
            result = agent.run(TASK)
            store.close()
            saved = load_run(folder)
        self.assertEqual(result.status, "done")
        self.assertEqual(len(saved.calls), len(run.server.conversations))
        self.assertEqual([c.input_tokens for c in saved.calls],
                         [len(json.dumps(_unmarked(c))) // 4 for c in run.server.conversations])
        self.assertEqual(saved.calls, agent.calls)
        self.assertEqual(saved.messages, agent.messages)
        self.assertTrue(all(c.cost > 0 for c in saved.calls))


class Kills(unittest.TestCase):
    """A kill at each boundary of a step: completed tools and hooks never run again, no call is paid
    twice (only one in flight, listed as possibly billed), the history and the bill as uninterrupted."""

    def check(self, model: str, **kill):
        clean, expected, _ = uninterrupted(model)
        run = Run(model)
        result, saved = run.go(**kill)
        self.assertEqual(result.status, "done", result.error)
        self.assertEqual(saved.messages, expected.messages)
        self.assertEqual(bill(saved), bill(expected))
        self.assertEqual(saved.state, expected.state)
        self.assertEqual(run.tool_runs, clean.tool_runs)  # each tool once
        repeats = len(run.hook_runs) - len(clean.hook_runs)
        self.assertEqual(repeats, 1 if kill.get("die_in") else 0)  # only a hook killed while it ran
        self.assertEqual(sorted(set(run.hook_runs)), sorted(set(clean.hook_runs)))
        paid_twice = len(run.server.conversations) - len(clean.server.conversations)
        self.assertEqual(paid_twice, 1 if kill.get("before") else 0)
        self.assertLessEqual(paid_twice, len(saved.unanswered_calls))
        return saved

    def test_a_kill_after_each_event_of_a_step_resumes_from_it(self):
        for model in MODELS:
            kinds = [e["type"] for e in uninterrupted(model)[2]]
            self.assertTrue({"sent", "reply", "tool_output", "turn", "ended"} <= set(kinds))
            for after, kind in enumerate(kinds[:-1], start=1):
                with self.subTest(model=model, after=after, kind=kind):
                    self.check(model, after=after)

    def test_a_call_in_flight_at_the_kill_is_the_only_one_paid_twice_and_is_listed(self):
        for model in MODELS:
            for before, event in enumerate(uninterrupted(model)[2], start=1):
                if event["type"] == "reply":
                    with self.subTest(model=model, before=before):
                        self.assertEqual(len(self.check(model, before=before).unanswered_calls), 1)

    def test_a_kill_inside_a_hook_or_the_end_hook_runs_only_that_hook_again(self):
        for model in MODELS:
            for nth, (point, _, _) in enumerate(uninterrupted(model)[0].hook_runs, start=1):
                with self.subTest(model=model, hook=nth, point=point):
                    self.check(model, die_in=nth)


class Breakpoint(unittest.TestCase):
    def test_the_cache_breakpoint_is_on_the_last_block_of_the_history_not_on_the_notes(self):
        for model in MODELS:
            run = Run(model)
            agent = run.agent(MemoryStore())
            agent.run(TASK)
            for whole in run.server.conversations:
                marked = [(i, k) for i, m in enumerate(whole["messages"]) if isinstance(m["content"], list)
                          for k, b in enumerate(m["content"]) if "cache_control" in b]
                self.assertTrue(marked, model)
                i, k = marked[-1]
                after = whole["messages"][i + 1:]
                self.assertTrue(all(m["role"] == "system" or "<!--" in json.dumps(m) or "(End of" in json.dumps(m)
                                    for m in after), (model, after))  # only the call's own entries follow it
                self.assertNotIn("cache_control", json.dumps(after))


class Threads(unittest.TestCase):
    def test_a_thread_is_created_continued_and_replayed_once_when_lost(self):
        run = Run(system="You add 3 times.")
        agent = run.agent(MemoryStore())
        agent.hooks.register(Point.POST_LLM_CALL, lambda e: setattr(run.server, "lose_threads", len(e.agent.calls) == 2))
        self.assertEqual(agent.run(TASK).status, "done")
        sent = [(r.get("thread") or {}).get("type") for r in run.server.requests]
        self.assertEqual(sent, ["create", "continue", "continue", "create", "continue"])  # the 404, then a replay
        kinds = [t["type"] for t in load(agent.store.events()).threads]
        self.assertEqual(kinds, ["create", "continue", "replay", "continue"])
        self.assertEqual(len(run.server.requests[3]["messages"]), len(run.server.conversations[2]["messages"]))


class AppendOnly(unittest.TestCase):
    def test_each_request_extends_the_one_before(self):
        for model in MODELS:
            run = Run(model, check_append_only=True)
            agent = run.agent(MemoryStore())
            agent.run(TASK)
            self.assertEqual(agent.edits, [])
            read = [_unmarked(c["messages"]) for c in run.server.conversations]
            for before, now in zip(read, read[1:]):
                self.assertEqual(now[:len(before)], before, model)


if os.environ.get("ANTHROPIC_BASE_URL"):
    class LiveSubset(unittest.TestCase):
        """The stop statuses, the bill, the breakpoint and append-only against the server in
        ANTHROPIC_BASE_URL (the real API, or an offline stand-in for it)."""

        model = os.environ.get("MODEL", MODELS[0])

        def agent(self, **settings) -> Agent:
            return Agent(anthropic.Anthropic(), model=self.model, system="You add with the tool, one call at a time.",
                         tools=[FunctionTool("add", "Add two integers.", Numbers, lambda n: str(n.a + n.b))],
                         check_append_only=True, **settings)

        def test_stop_statuses(self):
            self.assertEqual(self.agent().run("What is 2 + 3? Use the tool.").status, "done")
            self.assertEqual(self.agent(max_steps=1).run("Add 2 and 3 with the tool, then 5 and 4.").status,
                             "max_steps")
            self.assertEqual(self.agent(max_tokens=16).run("Write a long poem about numbers.").status, "truncated")
            broken = Agent(anthropic.Anthropic(base_url="http://127.0.0.1:9", max_retries=0), model=self.model)
            self.assertEqual(broken.run("Hi.").status, "error")

        def test_the_bill_the_breakpoint_and_append_only(self):
            with tempfile.TemporaryDirectory() as folder:
                agent = self.agent(store=RunStore(folder))
                result = agent.run("What is (2 + 3) + 4? Use the tool.")
                agent.store.close()
                saved = load_run(folder)
            self.assertEqual(result.status, "done", result.error)
            self.assertEqual(saved.calls, agent.calls)
            self.assertTrue(all(c.prompt_tokens > 0 for c in saved.calls))
            self.assertEqual(agent.edits, [])
            marked = [m for m in agent.last_request["messages"] if "cache_control" in json.dumps(m)]
            self.assertTrue(marked)


if __name__ == "__main__":
    unittest.main()
