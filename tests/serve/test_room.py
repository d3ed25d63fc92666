"""``serve`` as a workshop room: attendees (one API key each) kept apart and named, the room token."""

from __future__ import annotations

import io

import anthropic

from minimal_runtime.emulator import Emulator
from minimal_runtime.serve import ToolThenAnswer, started

SYSTEM = [{"type": "text", "text": "You are a careful agent that plans a release in small steps. " * 60,
           "cache_control": {"type": "ephemeral"}}]


def ask(client, text="Plan the release in one line."):
    return client.messages.create(model="claude-sonnet-5-5", max_tokens=200, system=SYSTEM,
                                  messages=[{"role": "user", "content": text}]).usage


def test_each_api_key_has_its_own_cache_and_one_key_shares_it():
    """Caches are not shared between organizations: a second attendee's first call writes the prefix
    the first attendee wrote, and reads none of it; that attendee's next call reads it."""
    with started(Emulator(model="claude-sonnet-5-5", policy=ToolThenAnswer()), out=io.StringIO()) as (url, _):
        ada = anthropic.Anthropic(base_url=url, api_key="sk-room-ada")
        bob = anthropic.Anthropic(base_url=url, api_key="sk-room-bob")
        first = ask(ada)
        assert first.cache_creation_input_tokens > 500 and first.cache_read_input_tokens == 0
        bobs_first = ask(bob)  # the same prefix, another key: written again, nothing read
        assert bobs_first.cache_creation_input_tokens == first.cache_creation_input_tokens
        assert bobs_first.cache_read_input_tokens == 0
        bobs_next = ask(bob, "And the one after?")
        assert bobs_next.cache_read_input_tokens == first.cache_creation_input_tokens
        again = ask(anthropic.Anthropic(base_url=url, api_key="sk-room-ada"))  # one key, another client: shares
        assert again.cache_read_input_tokens == first.cache_creation_input_tokens
        assert again.cache_creation_input_tokens == 0
