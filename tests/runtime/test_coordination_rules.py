"""The shared sandbox's rules, each stated by a test (issue 27: the coordination module scored by
mutation): silent alone, the notes file read once per conversation, claims that exclude others
but not their holder, and the reminder's wording for one or several others."""

from __future__ import annotations


import pytest

from minimal_runtime.core.hooks import HookEvent, HookRegistry, Point
from minimal_runtime.features.coordination import NOTES_FILE, Coordination, SharedSandbox


class Agent:
    """The little of an agent the hook reads: the history, and the batch it injects into."""

    def __init__(self, messages=()):
        self.messages, self.injected = list(messages), []

    def inject_turn_scoped(self, source, text):
        self.injected.append((source, text))


def task(text="do it"):
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def read(path=NOTES_FILE):
    return {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": path}}]}


def result():
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "notes"}]}


def remind(sandbox, messages=(), name="me"):
    agent = Agent(messages)
    HookRegistry().install(Coordination(sandbox, name)).run(Point.PRE_LLM_CALL, HookEvent(Point.PRE_LLM_CALL, agent))
    assert all(source == "coordination" for source, _ in agent.injected)
    return [text for _, text in agent.injected]


def sandbox_of(*members):
    sandbox = SharedSandbox()
    for m in members:
        sandbox.join(m)
    return sandbox


def test_one_member_is_not_shared_and_the_hook_stays_silent():
    assert not sandbox_of("me").shared and remind(sandbox_of("me")) == []
    assert not SharedSandbox().shared
    assert sandbox_of("me", "you").shared


def test_joining_twice_is_one_member():
    assert not sandbox_of("me", "me").shared


def test_the_reminder_counts_the_others_in_the_singular_and_the_plural():
    one, = remind(sandbox_of("me", "you"))
    assert one.splitlines()[0] == "I share this sandbox with 1 other agent: files can change under me."
    two, = remind(sandbox_of("me", "you", "they"))
    assert two.splitlines()[0] == "I share this sandbox with 2 other agents: files can change under me."


def test_the_reminder_lines_in_full_before_reading_and_claiming():
    text, = remind(sandbox_of("me", "you"), [task()])
    assert text.split("\n") == [
        "I share this sandbox with 1 other agent: files can change under me.",
        f"{NOTES_FILE} is how we coordinate. I read it once now, at the start of this conversation, not every turn.",
        f"I add to {NOTES_FILE} only what the others could not find out by themselves.",
        "Before my first edit I claim a workspace of my own."]


def test_a_claimed_workspace_is_named_in_the_reminder():
    sandbox = sandbox_of("me", "you")
    sandbox.claim("me", "wt/mine")
    sandbox.claim("you", "wt/yours")
    text, = remind(sandbox)
    assert text.splitlines()[-1] == "I work in my claimed workspace (wt/mine)."


def test_the_notes_count_as_read_only_after_the_last_task_message():
    sandbox = sandbox_of("me", "you")
    done = "I have read it in this conversation; I don't re-read it every turn."
    assert remind(sandbox, [task(), read(), result()])[0].split("\n")[1] == f"{NOTES_FILE} is how we coordinate. {done}"
    assert done not in remind(sandbox, [task(), read(), result(), task("next")])[0]  # a new conversation
    # a tool result is a user message too, but not a task: it does not start a conversation
    assert done in remind(sandbox, [task(), read(), result(), read("other.md"), result()])[0]


def test_reading_another_file_or_another_tool_is_not_reading_the_notes():
    sandbox = sandbox_of("me", "you")
    done = "I have read it in this conversation"
    assert done not in remind(sandbox, [task(), read("NOTES.md"), result()])[0]
    other = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {"path": NOTES_FILE}}]}
    assert done not in remind(sandbox, [task(), other, result()])[0]
    no_path = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {}}]}
    assert done not in remind(sandbox, [task(), no_path, result()])[0]


def test_notes_read_before_any_task_message_count_from_the_start():
    # no user task at all: the conversation is the whole history
    assert "I have read it in this conversation" in remind(sandbox_of("me", "you"), [read(), result()])[0]


def test_a_workspace_claimed_by_another_is_refused_but_its_holder_may_claim_it_again():
    sandbox = sandbox_of("a", "b")
    assert sandbox.claim("a", "wt/x") == "wt/x is yours."
    assert sandbox.claim("a", "wt/x") == "wt/x is yours."
    with pytest.raises(ValueError, match=r"^'wt/x' is claimed by a$"):
        sandbox.claim("b", "wt/x")
    assert sandbox.claims == {"a": "wt/x"}  # the refused claim changed nothing
    assert sandbox.claim("b", "wt/y") == "wt/y is yours." and sandbox.claims == {"a": "wt/x", "b": "wt/y"}


def test_claiming_a_new_workspace_releases_the_old_one():
    sandbox = sandbox_of("a", "b")
    sandbox.claim("a", "wt/x")
    sandbox.claim("a", "wt/z")
    assert sandbox.claim("b", "wt/x") == "wt/x is yours."
