"""The progress bar and `track`: redrawn in place on a terminal, one summary line elsewhere."""

from __future__ import annotations

import io

from site_knowledge.progress import track


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_track_yields_every_item_and_ends_with_one_summary_line_off_a_terminal():
    stream = io.StringIO()
    assert list(track(["a", "b", "c"], "site-knowledge: reading pages", "pages", stream)) == [
        "a", "b", "c"]
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("site-knowledge: reading pages: 3/3 pages at ")


def test_track_redraws_after_each_item_on_a_terminal():
    stream = Terminal()
    seen = []
    for item in track([1, 2], "tokenizing", "passages", stream):
        seen.append(stream.getvalue().count("\r"))
        assert item in (1, 2)
    assert seen == [0, 1], "the bar moves once an item is done"
    redraws = stream.getvalue().split("\r")[1:]
    assert redraws[0].startswith("tokenizing [###############...............] 1/2")
    assert redraws[-1].startswith("tokenizing: 2/2 passages at ") and redraws[-1].endswith("\n")
