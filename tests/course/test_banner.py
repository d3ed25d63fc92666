"""The banner under a chapter's settings cell: which code the chapter runs and, for the learner's, how many
of the chapter's tests it passes (tests/ui/test_reading_mode.py shows it in JupyterLab)."""

from __future__ import annotations

from solutions import Banner

CHAPTER = "ch01_ephemeral_queue"


def test_reading_mode_says_so_and_names_the_switch():
    kind, lines = Banner(CHAPTER, "solutions", None).lines()
    assert kind == "reading" and "Reading mode" in lines[0] and 'IMPL = "exercises"' in lines[1]


def test_the_learners_code_says_how_many_tests_pass_and_the_first_failure():
    kind, lines = Banner(CHAPTER, "exercises", (9, 2, "AssertionError: clear_at")).lines()
    said = "\n".join(lines)
    assert kind == "failing" and "passes 9 of 11 tests of tests/ch01_ephemeral_queue" in said and "fails 2" in said
    assert "The first failure: AssertionError: clear_at" in said and "--impl exercises" in said
    kind, lines = Banner(CHAPTER, "exercises", (11, 0, "")).lines()
    assert kind == "passing" and "passes all 11 tests" in lines[0]
    kind, lines = Banner(CHAPTER, "exercises", (0, 0, "")).lines()  # a file that does not import: nothing collected
    assert kind == "failing" and "could not run" in lines[0]


def test_the_html_escapes_what_a_failure_message_says():
    html = Banner(CHAPTER, "exercises", (0, 1, "AssertionError: <b>not bold</b>"))._repr_html_()
    assert "&lt;b&gt;not bold&lt;/b&gt;" in html and "<b>" not in html and "course-banner-failing" in html
