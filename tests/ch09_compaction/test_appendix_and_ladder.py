"""Chapter 09: the appendix keeps every URL and path verbatim; the ladder compacts before it
summarizes, and summarizes only when compacting stops paying."""

from __future__ import annotations


def test_urls_and_paths_are_kept_verbatim_in_the_order_first_seen(impl):
    texts = ["Fetched https://docs.example/page/3?chars=500 and saved notes/page-3.md.",
             "Read notes/page-3.md again; wrote /tmp/run/out.txt and report.md"]
    assert impl.appendix(texts) == ["https://docs.example/page/3?chars=500", "notes/page-3.md", "/tmp/run/out.txt",
                                    "report.md"]


def test_trailing_punctuation_and_brackets_are_not_part_of_a_url(impl):
    texts = ['See (https://a.example/x), then "https://b.example/y"; and https://c.example/z.']
    assert impl.appendix(texts) == ["https://a.example/x", "https://b.example/y", "https://c.example/z"]


def test_the_parts_of_a_url_are_not_paths_and_numbers_are_not_files(impl):
    texts = ["https://docs.example/files/readme.md costs 3.14 dollars", "saved at .observations/a-1.txt;"]
    assert impl.appendix(texts) == ["https://docs.example/files/readme.md", ".observations/a-1.txt"]


def test_nothing_named_gives_an_empty_appendix(impl):
    assert impl.appendix(["I read the page and wrote a note.", ""]) == []


def test_the_ladder_waits_under_its_limit(impl):
    assert impl.ladder_step(9_999, 10_000, compactable=40, last_gain=None, min_gain=0.2) == "wait"


def test_the_ladder_compacts_first_and_while_it_pays(impl):
    assert impl.ladder_step(10_000, 10_000, compactable=40, last_gain=None, min_gain=0.2) == "compact"
    assert impl.ladder_step(12_000, 10_000, compactable=20, last_gain=0.35, min_gain=0.2) == "compact"
    assert impl.ladder_step(12_000, 10_000, compactable=20, last_gain=0.2, min_gain=0.2) == "compact"


def test_the_ladder_summarizes_at_diminishing_returns_or_with_nothing_left(impl):
    assert impl.ladder_step(12_000, 10_000, compactable=20, last_gain=0.05, min_gain=0.2) == "summarize"
    assert impl.ladder_step(12_000, 10_000, compactable=0, last_gain=None, min_gain=0.2) == "summarize"
