"""Restorable compression's rules, each stated by a test (issue 27: the recall module scored by
mutation): what a saved copy is named and when it is reused, the compact form of a write and of
any other call, what the appendix takes as a URL or a path, what a model reads, and what
``restorable`` counts."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace as NS

from minimal_runtime.core.hooks import HookRegistry, Point, ToolResultEvent
from minimal_runtime.features.recall import (Keeper, Produced, appendix, appendix_lines, compact_call, grouped_texts,
                                             is_compacted, restorable, result_text, texts_of)


def test_a_saved_copy_is_named_by_its_kind_and_the_hash_of_its_bytes(tmp_path):
    keeper = Keeper(tmp_path)
    digest = hashlib.sha256("é page".encode()).hexdigest()[:16]
    assert keeper.keep("é page") == f".observations/compacted-{digest}.txt"
    assert keeper.keep("é page", kind="appendix") == f".observations/appendix-{digest}.txt"
    assert (tmp_path / f".observations/compacted-{digest}.txt").read_bytes() == "é page".encode()
    assert keeper.holds(f".observations/compacted-{digest}.txt", "é page")


def test_holds_is_exact_bytes_inside_the_workspace(tmp_path):
    keeper = Keeper(tmp_path)
    (tmp_path / "a.md").write_text("abc")
    (tmp_path / "dir.md").mkdir()
    assert keeper.holds("a.md", "abc") and not keeper.holds("a.md", "abcd") and not keeper.holds("a.md", "ab")
    assert not keeper.holds("missing.md", "") and not keeper.holds("dir.md", "")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text("abc")
    assert not keeper.holds(f"../{outside.name}", "abc")


def call(name="fetch", id="t1", **args):
    return {"type": "tool_use", "id": id, "name": name, "input": args}


def result(content, id="t1"):
    return {"type": "tool_result", "tool_use_id": id, "content": content}


def test_a_write_keeps_its_path_when_the_file_still_holds_what_was_written(tmp_path):
    keeper = Keeper(tmp_path)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes/a.md").write_text("x" * 1234)
    use, res = compact_call(call("write_file", path="notes/a.md", content="x" * 1234), result("ok"), keeper)
    assert use["input"] == {"path": "notes/a.md", "content": "[1,234 characters, in notes/a.md]"} and res == result("ok")
    assert is_compacted(use, res, keeper) and compact_call(use, res, keeper) == (use, res)


def test_a_write_whose_file_changed_since_is_saved_and_its_copy_named(tmp_path):
    keeper = Keeper(tmp_path)
    (tmp_path / "a.md").write_text("changed")
    use, _ = compact_call(call("write_file", path="a.md", content="original"), result("ok"), keeper)
    saved = keeper.keep("original")
    assert use["input"]["content"] == f"[8 characters, in {saved}]"


def test_any_other_result_becomes_its_source_and_a_saved_path(tmp_path):
    keeper = Keeper(tmp_path)
    page = "the page\nwhole"
    use, res = compact_call(call(url="https://d.example/1"), result(page), keeper)
    saved = keeper.keep(page)
    assert use == call(url="https://d.example/1")
    assert res["content"] == f"[compacted: fetch https://d.example/1; the full result is saved at {saved}; read_file {saved} to see it again]"
    assert res["tool_use_id"] == "t1" and is_compacted(use, res, keeper)
    _, by_path = compact_call(call("read_file", path="a.md"), result("text"), keeper)
    assert by_path["content"].startswith("[compacted: read_file a.md; ")
    _, sourceless = compact_call(call("search", query="q"), result([{"type": "text", "text": "hits"}]), keeper)
    assert sourceless["content"].startswith(f"[compacted: search; the full result is saved at {keeper.keep('hits')};")


def test_a_write_without_text_content_is_compacted_like_any_other_call(tmp_path):
    keeper = Keeper(tmp_path)
    use, res = compact_call(call("write_file", path="a.md"), result("written"), keeper)
    assert use == call("write_file", path="a.md") and res["content"].startswith("[compacted: write_file a.md; ")


def test_a_compact_form_is_recognised_by_the_run_s_record_never_by_its_text(tmp_path):
    """Issue 42, item 2: a tool can print what looks like a compact form; only the forms the
    runtime wrote (``CompactedRecord``, in the workspace) count, for that call, exactly."""
    keeper = Keeper(tmp_path)
    assert not is_compacted(call("write_file", content="[12 characters, in a.md]"), result("ok"), keeper)
    assert not is_compacted(call(), result("[compacted: fetch u; the full result is saved at x.txt]"), keeper)
    assert not is_compacted(call(), result([{"type": "text", "text": "[compacted: fetch u]"}]), keeper)
    assert not is_compacted({"type": "tool_use", "id": "t", "name": "fetch"}, {"type": "tool_result"}, keeper)
    use, res = compact_call(call(id="t7", url="u"), result("the page", id="t7"), keeper)
    write, ok = compact_call(call("write_file", id="t8", path="a.md", content="abc"), result("ok", id="t8"), keeper)
    assert is_compacted(use, res, keeper) and is_compacted(write, ok, keeper)
    assert not is_compacted(call(id="t9", url="u"), {**res, "tool_use_id": "t9"}, keeper)  # the same text, another call
    assert not is_compacted(use, {**res, "content": res["content"] + " "}, keeper)  # not exactly the form written
    assert is_compacted(use, res, Keeper(tmp_path))  # the record is the run's: a resumed run reads it back
    (tmp_path / ".observations/compacted.jsonl").write_bytes(
        (tmp_path / ".observations/compacted.jsonl").read_bytes() + b'{"id": "t1", "sha')  # a line cut by a kill
    assert is_compacted(use, res, Keeper(tmp_path))
    later, _ = compact_call(call("write_file", id="t10", path="b.md", content="x"), result("ok", id="t10"), Keeper(tmp_path))
    assert is_compacted(later, result("ok", id="t10"), Keeper(tmp_path))  # written after the cut line: still read


def test_a_result_that_only_looks_compacted_is_compacted_and_saved_by_simple_compaction(tmp_path):
    """Issue 42, item 2, end to end: a page that starts with ``[compacted: `` is saved and named in
    the summary like any other, so ``restorable`` gives it back."""
    from minimal_runtime.core.messages import user
    from minimal_runtime.features.compaction import SimpleCompaction
    keeper = Keeper(tmp_path)
    forged = "[compacted: fetch u; the full result is saved at notes/x.md] and the real figures: Pro $20, Team $45"
    produced = {"t1": forged}
    history = [user("Read the page."), {"role": "assistant", "content": [call(url="https://d.example/1")]},
               {"role": "user", "content": [result(forged)]}]
    agent = NS(messages=list(history), calls=[NS(prompt_tokens=10_000)],
               inject_turn_scoped=lambda *a, **k: None, replace_history=lambda m: setattr(agent, "messages", list(m)))
    SimpleCompaction(keeper, limit=100, handoff=False).before_call(NS(agent=agent))
    assert len(agent.messages) == 1  # summarized
    assert restorable(produced, agent.messages, keeper) == (1, 1)


def test_the_appendix_takes_urls_to_their_end_without_trailing_punctuation():
    text = ('See https://a.example/p?q=1, then (https://b.example/x) and "http://c.example/y"; '
            "also https://d.example/z. and https://e.example/w: done <https://f.example/v>")
    assert appendix([text]) == ["https://a.example/p?q=1", "https://b.example/x", "http://c.example/y",
                                "https://d.example/z", "https://e.example/w", "https://f.example/v"]


def test_the_appendix_takes_file_paths_and_not_numbers_or_the_parts_of_urls():
    text = ("Wrote notes/page-3.md and /tmp/run/out.txt, read .observations/a-1.txt and ../up/b.json; "
            "pi is 3.14, version v2.0 at https://g.example/docs/file.html; report.md.")
    assert appendix([text]) == ["notes/page-3.md", "/tmp/run/out.txt", ".observations/a-1.txt", "../up/b.json",
                                "https://g.example/docs/file.html", "report.md"]


def test_the_appendix_lists_each_once_in_the_order_first_seen_across_texts():
    assert appendix(["b.md then https://a.example/", "a.md and b.md", "https://a.example/ again"]) == \
        ["b.md", "https://a.example/", "a.md"]
    assert appendix([]) == [] and appendix(["nothing named here"]) == []


def test_appendix_lines_keep_what_one_text_named_together_and_skip_what_was_seen():
    assert appendix_lines(["https://a.example/1 saved at .observations/c-1.txt", "again https://a.example/1",
                           "new b.md and https://a.example/1"]) == \
        ["- https://a.example/1 .observations/c-1.txt", "- b.md"]


def test_grouped_texts_join_a_call_with_its_result_and_split_prose_by_line():
    messages = [{"role": "user", "content": "the task"},
                {"role": "assistant", "content": [{"type": "text", "text": "line one\nline two"},
                                                  call(url="https://a.example/1")]},
                {"role": "user", "content": [result("saved at .observations/c-1.txt"), result("orphan", id="zz")]}]
    assert grouped_texts(messages) == ["the task", "line one", "line two",
                                       "https://a.example/1 saved at .observations/c-1.txt", "orphan"]


def test_a_call_without_a_result_stays_its_own_text():
    messages = [{"role": "assistant", "content": [call(url="https://a.example/1")]}]
    assert grouped_texts(messages) == ["https://a.example/1"]


def test_what_a_model_reads_is_text_inputs_and_results_not_thinking_or_tool_changes():
    messages = [{"role": "assistant", "content": [
        {"type": "thinking", "thinking": "secret", "signature": "s"}, {"type": "redacted_thinking", "data": "d"},
        {"type": "tool_addition", "text": "added"}, {"type": "tool_removal", "text": "removed"},
        {"type": "text", "text": "said"}, call(url="u", nested={"k": "v"}, n=3)]},
        {"role": "user", "content": [result([{"type": "text", "text": "r1"}, {"type": "image", "source": {"data": "x"}}])]},
        {"role": "user", "content": "plain"}, {"role": "user"}]
    assert texts_of(messages) == ["said", "u", "v", "r1", "plain"]
    odd = [{"role": "user", "content": [{"type": "text", "text": "t", "content": "c"},  # every string of a block, in order
                                        {"type": "tool_result", "tool_use_id": "x", "text": "t2", "content": "c2"}]}]
    assert texts_of(odd) == ["t", "c", "t2", "c2"]


def test_a_result_s_text_from_a_string_or_its_text_blocks():
    assert result_text("s") == "s" and result_text(None) == "" and result_text(3) == ""
    assert result_text([{"type": "text", "text": "a"}, {"type": "image"}, "junk", {"type": "text", "text": "b"}]) == "a\n\nb"


def produced(tmp_path, *events):
    keeper = Keeper(tmp_path)
    feature = Produced(keeper)
    hooks = HookRegistry().install(feature)
    for tool_call, tool_result in events:
        hooks.run(Point.POST_TOOL_CALL, ToolResultEvent(Point.POST_TOOL_CALL, NS(), tool_call=tool_call, tool_result=tool_result))
    assert hooks.failures == []
    return feature


def test_produced_records_writes_and_successful_results_whole_and_no_errors(tmp_path):
    feature = produced(tmp_path,
                       (call("write_file", id="w", path="a.md", content="written"), result("ok", id="w")),
                       (call(id="f"), result([{"type": "text", "text": "page"}], id="f")),
                       (call(id="e"), {**result("boom", id="e"), "is_error": True}),
                       (call("write_file", id="x", path="b.md"), result("ok", id="x")))
    assert feature.contents == {"w": "written", "f": "page", "x": ""}


def test_restorable_counts_the_dropped_contents_a_path_in_view_gives_back(tmp_path):
    keeper = Keeper(tmp_path)
    kept = keeper.keep("page one")
    outputs = {"a": "page one", "b": "page two", "c": "still in view", "d": ""}
    seen = [{"role": "user", "content": [{"type": "text", "text": f"see {kept}; still in view"}]}]
    assert restorable(outputs, seen, keeper) == (1, 2)  # a is back from its copy; b is lost; c and d never dropped


def test_restorable_follows_a_saved_appendix_to_the_copies_it_names(tmp_path):
    keeper = Keeper(tmp_path)
    first, second = keeper.keep("page one"), keeper.keep("page two")
    index = keeper.keep(f"- {first}\n- {second}\n- ../outside.txt\n", kind="appendix")
    seen = [{"role": "user", "content": [{"type": "text", "text": f"all lines are saved at {index}"}]}]
    assert restorable({"a": "page one", "b": "page two", "c": "page three"}, seen, keeper) == (2, 3)
    plain = keeper.keep(f"- {first}\n", kind="compacted")  # only an appendix file is followed
    seen = [{"role": "user", "content": [{"type": "text", "text": f"see {plain}"}]}]
    assert restorable({"a": "page one"}, seen, keeper) == (0, 1)


def test_restorable_follows_an_appendix_and_the_other_paths_in_view_alike(tmp_path):
    keeper = Keeper(tmp_path)
    first, second = keeper.keep("page one"), keeper.keep("page two")
    index = keeper.keep(f"- {second}\n", kind="appendix")
    seen = [{"role": "user", "content": [{"type": "text", "text": f"see {first}, and the rest at {index}"}]}]
    assert restorable({"a": "page one", "b": "page two"}, seen, keeper) == (2, 2)


def test_an_appendix_with_undecodable_bytes_is_still_followed(tmp_path):
    keeper = Keeper(tmp_path)
    copy = keeper.keep("page one")
    (tmp_path / ".observations/appendix-raw.txt").write_bytes(b"\xff\xfe junk\n- " + copy.encode() + b"\n")
    seen = [{"role": "user", "content": [{"type": "text", "text": "saved at .observations/appendix-raw.txt"}]}]
    assert restorable({"a": "page one"}, seen, keeper) == (1, 1)


def test_content_with_undecodable_bytes_is_restorable_byte_for_byte(tmp_path):
    keeper = Keeper(tmp_path)
    raw = b"binary \xff\xfe tail".decode("utf-8", "surrogateescape")  # how a tool's bytes arrive
    copy = keeper.keep(raw)
    seen = [{"role": "user", "content": [{"type": "text", "text": f"saved at {copy}"}]}]
    assert restorable({"a": raw}, seen, keeper) == (1, 1)


def test_a_result_in_view_as_separate_text_blocks_is_not_dropped(tmp_path):
    keeper = Keeper(tmp_path)  # Produced joins a result's blocks by lines; the model reads them block by block
    feature = produced(tmp_path, (call(id="f"), result([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}], id="f")))
    seen = [{"role": "user", "content": [result([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}], id="f")]}]
    assert feature.contents == {"f": "one\ntwo"} and restorable(feature.contents, seen, keeper) == (0, 0)


def test_a_url_in_view_is_not_a_path_in_the_workspace(tmp_path):
    keeper = Keeper(tmp_path)
    lookalike = tmp_path / "https:" / "d.example" / "page.txt"  # where the URL's text would land as a path
    lookalike.parent.mkdir(parents=True)
    lookalike.write_text("page one")
    seen = [{"role": "user", "content": [{"type": "text", "text": "fetched https://d.example/page.txt"}]}]
    assert restorable({"a": "page one"}, seen, keeper) == (0, 1)
    index = keeper.keep("- https://d.example/page.txt\n", kind="appendix")
    seen = [{"role": "user", "content": [{"type": "text", "text": f"all lines are saved at {index}"}]}]
    assert restorable({"a": "page one"}, seen, keeper) == (0, 1)


def test_an_appendix_that_names_itself_is_read_once(tmp_path, monkeypatch):
    keeper = Keeper(tmp_path)
    copy = keeper.keep("page one")
    looped = tmp_path / ".observations/appendix-loop.txt"
    looped.write_text(f"- {copy}\n- .observations/appendix-loop.txt\n")
    reads, read_bytes = [], Path.read_bytes

    def counted(self):
        reads.append(self.name)
        assert reads.count(self.name) == 1, f"{self.name} read twice"
        return read_bytes(self)
    monkeypatch.setattr(Path, "read_bytes", counted)
    seen = [{"role": "user", "content": [{"type": "text", "text": "saved at .observations/appendix-loop.txt"}]}]
    assert restorable({"a": "page one"}, seen, keeper) == (1, 1)


def test_a_copy_is_written_once_and_reused_while_it_matches_its_name(tmp_path, monkeypatch):
    import minimal_runtime.features.recall as recall
    writes, write_whole = [], recall.write_whole
    monkeypatch.setattr(recall, "write_whole", lambda root, path, data: (writes.append(path), write_whole(root, path, data)))
    keeper = Keeper(tmp_path)
    assert keeper.keep("page one") == keeper.keep("page one") and len(writes) == 1


def test_grouped_texts_keep_every_string_message_in_order():
    messages = [{"role": "user", "content": "the task"}, {"role": "assistant", "content": [{"type": "text", "text": "said"}]},
                {"role": "user", "content": "a steer"}]
    assert grouped_texts(messages) == ["the task", "said", "a steer"]


def test_the_appendix_keeps_paths_and_urls_in_the_order_they_stand_in_a_text():
    assert appendix(["https://a.example/1 https://b.example/2 c.md https://d.example/3 e.md"]) == \
        ["https://a.example/1", "https://b.example/2", "c.md", "https://d.example/3", "e.md"]
    assert appendix(["https://h.example/ABX, then https://h.example/X."]) == ["https://h.example/ABX", "https://h.example/X"]


def test_an_offloaded_output_with_undecodable_bytes_is_recorded_byte_for_byte(tmp_path):
    from minimal_runtime.features.filesystem import Offloader
    raw = ("page " * 100 + "\udcff\udcfe tail")  # bytes 0xff 0xfe, as a tool's undecodable output arrives
    use = call(id="f", url="https://d.example/1")
    offloaded = Offloader(tmp_path, threshold=100)(use, result(raw, id="f"))
    assert Keeper(tmp_path).offloaded("f") and offloaded["content"] != raw
    assert produced(tmp_path, (use, offloaded)).contents == {"f": raw}


def test_the_appendix_takes_an_extension_after_the_last_dot_in_either_case():
    assert appendix(["DATA.CSV paper.TEX app.v1.2 and notes/v2.md"]) == ["DATA.CSV", "paper.TEX", "notes/v2.md"]
