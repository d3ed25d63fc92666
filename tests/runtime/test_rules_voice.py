"""The shipped filesystem rules state facts: on the current models the batch is a turn-scoped system
entry (operator authority), so a block that speaks as the agent ("I persist ...") or to it ("you")
puts words in the wrong mouth. Checked by meaning (no first or second person), not one spelling."""

from __future__ import annotations

import re

from minimal_runtime.features.filesystem import NAIVE_RULES, REFINED_RULES

PERSONAL = re.compile(r"\b(I|I'm|I've|me|my|mine|myself|you|your|yours|yourself)\b", re.IGNORECASE)


def test_the_filesystem_rules_speak_in_neither_first_nor_second_person():
    for rules in (NAIVE_RULES, REFINED_RULES):
        assert not PERSONAL.findall(rules), rules


def test_the_refined_rules_say_an_image_stays_in_the_history_until_compaction():
    """On an append-only history a viewed image is re-sent on every later call (chapter 06 measures
    it, and that taking it out afterwards is refused on the current model): a rule that says the
    pixels leave the context states something false."""
    image_rule = next(line for line in REFINED_RULES.splitlines() if "Images" in line)
    assert not re.search(r"do(es)? not stay", image_rule), image_rule
    assert re.search(r"stays?\b.*\buntil\b.*\bcompaction", image_rule), image_rule
