"""Chapter 04: what the plan block and the executor's task block carry in each state of a plan.

The tests read the blocks for their meaning (the goal, the current phase, the progress, one mark
on the right line of the map, the skills that apply, the rules, the voice of a system entry), not
for one spelling of them: any wording that carries the same facts passes.
"""

from __future__ import annotations

import re

import pytest

from minimal_runtime.example import planning_team
from minimal_runtime.example.planning import reference_items
from tests.support import CURRENT_MODEL, on_both_generations

TITLES = ["Scope the sources", "Collect pricing data", "Build the comparison table", "Write up the gaps"]
SKILLS = [[], ["web_research", "spreadsheets"], [], ["writing"]]
STATUS_WORDS = {"pending": ("pending",), "in_progress": ("in progress", "in_progress"), "done": ("done",)}
FIRST_OR_SECOND_PERSON = re.compile(r"\b(I|I'm|I've|I'll|me|my|mine|[Yy]ou|[Yy]our|[Yy]ou're)\b")


def make_plan(impl, statuses):
    return impl.Plan(goal="compare four competitors' pricing", phases=[
        impl.Phase(title=t, status=s, skills=k) for t, k, s in zip(TITLES, SKILLS, statuses)])


def map_lines(block, plan):
    """The map line of each phase: the line naming its title and its status (and not a heading)."""
    lines = []
    for phase in plan.phases:
        found = [line for line in block.splitlines() if phase.title in line
                 and any(w in line for w in STATUS_WORDS[phase.status])]
        assert found, f"no line of the plan map shows {phase.title!r} with its status {phase.status!r}:\n{block}"
        lines.append(found[-1])
    return lines


def residue(line, phase, number):
    """A map line minus what every line has in its own words (the title, the status, the number):
    what is left is the line's layout, plus the mark if this line has it."""
    for word in (phase.title, *STATUS_WORDS[phase.status]):
        line = line.replace(word, "")
    return re.sub(rf"\b{number}\b", "", line).strip()


def marked(block, plan):
    """The 0-based phases whose map line differs from the others' (the mark), from the residues."""
    residues = [residue(line, p, i + 1) for i, (line, p) in enumerate(zip(map_lines(block, plan), plan.phases))]
    common = max(set(residues), key=residues.count)
    return [i for i, r in enumerate(residues) if r != common], residues


def says(block, *parts):
    """Some one line of the block holds every part (words or numbers, whole)."""
    return any(all(re.search(rf"(?<![\w/]){re.escape(p)}(?![\w/])", line) for p in parts) for line in block.splitlines())


STATES = {"first": ["pending"] * 4, "middle": ["done", "in_progress", "pending", "pending"],
          "last": ["done", "done", "done", "in_progress"]}


@pytest.mark.parametrize("state", STATES)
def test_the_block_names_the_goal_the_current_phase_and_the_progress(impl, state):
    plan = make_plan(impl, STATES[state])
    block = impl.render_plan_block(plan)
    n, done = plan.current + 1, plan.done
    assert "compare four competitors' pricing" in block, f"the block should state the plan's goal, in every state:\n{block}"
    assert says(block, str(n), "4", TITLES[n - 1]), f"no line says phase {n} of 4 is current, with its title:\n{block}"
    assert re.search(rf"\b{done}\s*(/|of)\s*4\b[^\n]*done|done[^\n]*\b{done}\s*(/|of)\s*4\b", block), \
        f"the progress ({done} of 4 phases done) is not stated:\n{block}"


@pytest.mark.parametrize("state", STATES)
def test_the_map_marks_the_current_phase_and_only_it(impl, state):
    plan = make_plan(impl, STATES[state])
    block = impl.render_plan_block(plan)
    lines = map_lines(block, plan)
    assert len(set(lines)) == 4, "each phase needs its own line in the map"
    assert marked(block, plan)[0] == [plan.current], f"the mark should be on phase {plan.current + 1} only: {lines}"


def test_the_mark_is_the_same_mark_wherever_the_current_phase_is(impl):
    marks = set()
    for statuses in STATES.values():
        plan = make_plan(impl, statuses)
        (current,), residues = marked(impl.render_plan_block(plan), plan)
        marks.add(residues[current])
    assert len(marks) == 1, f"the current phase is marked differently from state to state: {marks}"


def test_skills_are_the_current_phases_only(impl):
    middle = impl.render_plan_block(make_plan(impl, STATES["middle"]))
    assert "web_research" in middle and "spreadsheets" in middle and "writing" not in middle, \
        f"with phase 2 current, the block lists phase 2's skills (web_research, spreadsheets) and no other phase's:\n{middle}"
    first = impl.render_plan_block(make_plan(impl, STATES["first"]))
    assert not any(s in first for s in ("web_research", "spreadsheets", "writing")), \
        f"phase 1 has no skills: the block names none while it is current:\n{first}"


def test_when_every_phase_is_done_no_phase_is_current(impl):
    plan = make_plan(impl, ["done"] * 4)
    block = impl.render_plan_block(plan)
    assert "compare four competitors' pricing" in block and impl.COMMUNICATION_RULES in block, \
        f"with every phase done, the block still states the goal and carries COMMUNICATION_RULES:\n{block}"
    assert re.search(r"\b4\s*(/|of)\s*4\b", block) and "done" in block, f"the block should say 4/4 phases are done:\n{block}"
    assert marked(block, plan)[0] == [], "with every phase done, no line of the map may be marked"
    assert not any("current" in line.lower() and any(t in line for t in TITLES) for line in block.splitlines()), \
        f"with every phase done, no line may name a phase as current:\n{block}"


@pytest.mark.parametrize("state", STATES)
def test_the_block_states_facts_carries_the_rules_and_has_no_headers(impl, state):
    block = impl.render_plan_block(make_plan(impl, STATES[state]))
    assert impl.COMMUNICATION_RULES in block, f"the plan block must carry COMMUNICATION_RULES, verbatim:\n{block}"
    assert not FIRST_OR_SECOND_PERSON.search(block.replace(impl.COMMUNICATION_RULES, "")), \
        f"a system entry states facts; it does not speak as the agent or to it:\n{block}"
    assert not any(line.lstrip().startswith("#") for line in block.splitlines()), \
        f"plain text: no Markdown header lines ('#'):\n{block}"


@pytest.mark.parametrize("scope_line", [True, False])
def test_task_block(impl, scope_line):
    plan = make_plan(impl, STATES["middle"])
    task = impl.ExecutorTask(objective="fetch the Acme pricing page and save the tiers to acme-pricing.md",
                             phase=2, plan=plan, scope_line=scope_line)
    block = impl.render_task_block(task)
    lines = block.splitlines()
    assert f"{impl.TASK_LINE}fetch the Acme pricing page and save the tiers to acme-pricing.md" in lines, \
        f"one line must be TASK_LINE followed by the objective, alone on its line:\n{block}"
    assert "compare four competitors' pricing" in block and says(block, "2", "4", TITLES[1]), \
        f"the block should state the plan's goal, and on one line the task's phase: 2 of 4, {TITLES[1]!r}:\n{block}"
    assert map_lines(block, plan)[1].endswith(f"  <- {impl.MY_PHASE}"), \
        f"phase 2's map line should end with '  <- ' + MY_PHASE ({impl.MY_PHASE!r}):\n{block}"
    assert sum(f"<- {impl.MY_PHASE}" in line for line in lines) == 1, f"only the task's phase is marked '<- {impl.MY_PHASE}':\n{block}"
    assert (impl.SCOPE_LINE in block) is scope_line, \
        f"the SCOPE_LINE paragraph belongs in the block exactly when task.scope_line is true ({scope_line}):\n{block}"
    assert "report" in block and "partial" in block, f"say how the run ends: 'report', with status done or partial:\n{block}"
    assert not FIRST_OR_SECOND_PERSON.search(block), f"facts only: no 'I', 'my', 'you' or 'your':\n{block}"


def test_the_scope_line_is_the_only_difference(impl):
    plan = make_plan(impl, STATES["middle"])
    blocks = [impl.render_task_block(impl.ExecutorTask(objective="o", phase=2, plan=plan, scope_line=s)) for s in (True, False)]
    with_scope, without = (set(b.splitlines()) - {""} for b in blocks)
    assert without < with_scope and all(impl.SCOPE_LINE in line for line in with_scope - without), \
        f"scope_line may only add the SCOPE_LINE paragraph; it changed other lines: {sorted(without ^ with_scope)}"


@on_both_generations
def test_a_team_runs_on_the_chapters_renderers(impl, tmp_path, model):
    team = planning_team(tmp_path, "Summarise the reference manual", reference_items(3), online=False, model=model,
                         render_plan=impl.render_plan_block, render_task=impl.render_task_block)
    result = team.planner.run("Summarise pages 0 to 2.")
    assert result.status == "done", f"the planner's run stopped: {result.error}"
    assert team.plan.plan.done == 3 and len(team.executors) == 3, \
        (f"{team.plan.plan.done} of 3 phases done by {len(team.executors)} executors: the simulated executor reads TASK_LINE "
         f"and the '<- {impl.MY_PHASE}' mark from your task block; are they there?")
    last = team.planner.last_request["messages"][-1]
    assert "<!-- plan -->" in str(last), "the planner's last request should end with the plan block"
    if model == CURRENT_MODEL:  # on a current model the block is a turn-scoped system entry
        assert last["role"] == "system" and last.get("clear_at") == "next_user_message", \
            f"on a current model the plan block rides in a turn-scoped system entry: {last!r}"
