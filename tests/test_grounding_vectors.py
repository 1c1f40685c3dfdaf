"""The Python grounding against the shared vectors its JavaScript twin is tested on.

``scripts/make_grounding_vectors.py`` writes ``tests/data/grounding_vectors.json``; this test
recomputes every case with today's code and compares, so a change to the grounding (or to the
cases) fails here until the file is regenerated, and the regenerated file shows the change in
its diff. ``tests/test_browser_grounding.py`` runs the JavaScript side on the same file.
"""

from __future__ import annotations

from vector_files import assert_current, generated, stored

NAME, SCRIPT = "grounding_vectors.json", "make_grounding_vectors.py"


def test_the_vectors_are_what_python_computes_today() -> None:
    file = stored(NAME)
    file.pop("unicode")  # a property of the interpreter, checked on the JavaScript side
    assert_current(NAME, SCRIPT, file, generated(SCRIPT, with_unicode=False))


def test_the_vectors_cover_every_step_with_hard_cases() -> None:
    file = stored(NAME)
    ground = file["ground"]
    assert sum(not c["grounded"] for c in ground) >= 5, "unsupported claims removed"
    opening = file["corpus"]["unsupported_opening"]
    assert any(c["text"].startswith(opening + " The closest it comes:")
               for c in ground), "a replacement quoting what the site does say"
    fiction = {i for i, p in enumerate(file["corpus"]["passages"]) if p["fiction"]}
    assert any(set(c["passages"]) & fiction and not c["grounded"] for c in ground), \
        "fiction supports no claim"
    assert any(c["changed"] and c["grounded"] for c in ground), "a marker or repeat fixed"
    assert any(c["fact_cited"] for c in ground), "a sentence only the facts hold, cited to them"
    assert {c["injection"] for c in file["injection"]} == {True, False}
    kinds = {kind for c in ground for kind, _ in c["removed"]}
    assert {"affirmation", "premise", "planted", "name", "number"} <= kinds
    assert {c["unconfirmed"] is None for c in file["affirmation"]} == {True, False}
    assert {c["premise"] is None for c in file["affirmation"]} == {True, False}
    assert any(c["terms"] for c in file["premises"])
    assert any(not c.isascii() for c in "".join(c["answer"] for c in file["sentences"]))
