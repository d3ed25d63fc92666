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
