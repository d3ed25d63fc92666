"""Counting in a recorded run the habits the course's simulated agents are given."""

from __future__ import annotations

from minimal_runtime.replay.habits import habits
from minimal_runtime.replay.recorded import RecordedCall, RecordedRun


def call(k: int, name: str, args: dict, error: bool = False) -> RecordedCall:
    use = {"type": "tool_use", "id": f"t{k}", "name": name, "input": args}
    result = {"type": "tool_result", "tool_use_id": f"t{k}", "content": "x", **({"is_error": True} if error else {})}
    return RecordedCall(assistant={"role": "assistant", "content": [use]}, results={f"t{k}": result})


def test_plan_upkeep_unchanged_rereads_and_repeated_failures_are_counted():
    run = RecordedRun(source="claude-code", path="x", calls=[
        call(1, "TodoWrite", {"todos": []}),
        call(2, "Read", {"file_path": "a.py"}),
        call(3, "Read", {"file_path": "a.py"}),                       # unchanged re-read
        call(4, "Read", {"file_path": "a.py", "offset": 100}),        # another part: not a re-read
        call(5, "Edit", {"file_path": "a.py", "old_string": "1", "new_string": "2"}),
        call(6, "Read", {"file_path": "a.py"}),                       # changed since: not a re-read
        call(7, "Bash", {"command": "pytest"}, error=True),
        call(8, "Bash", {"command": "pytest"}, error=True),           # the same failing call again
        call(9, "TodoWrite", {"todos": [1]}),
        call(10, "str_replace_editor", {"command": "view", "path": "b.py"}),
        call(11, "str_replace_editor", {"command": "view", "path": "b.py"}),  # OpenHands re-read
    ])
    h = habits(run)
    assert (h.actions, h.plan_updates, h.reads, h.unchanged_rereads, h.failed, h.repeated_failures) == (11, 2, 6, 2, 2, 1)
    assert (h.immediate_retries, h.identical_runs) == (1, 3)  # pytest twice; a.py read twice; b.py viewed twice
    assert h.plan_share == 2 / 11
