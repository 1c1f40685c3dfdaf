"""The gateway's prompt assembly against the shared vectors ``prompt.js`` is tested on.

``scripts/make_prompt_vectors.py`` writes ``tests/data/prompt_vectors.json``; this test
recomputes it with today's ``gateway/prompt.py``; ``tests/test_browser_grounding.py`` runs
``tests/browser/prompt.test.mjs`` on the same file.
"""

from __future__ import annotations

from vector_files import assert_current, generated, stored

NAME, SCRIPT = "prompt_vectors.json", "make_prompt_vectors.py"


def test_the_vectors_are_what_python_computes_today() -> None:
    assert_current(NAME, SCRIPT, stored(NAME), generated(SCRIPT))


def test_the_vectors_hold_the_cases_where_characters_and_code_units_differ() -> None:
    cases = {c["name"]: c for c in stored(NAME)["cases"]}
    assert cases["astral characters at the evidence budget"]["kept_evidence"] == [1, 2]
    assert cases["history budget in code points"]["kept_history"] == 2
    notice = cases["premise notice"]["messages"][-1]["content"]
    assert notice.endswith("The site never mentions: München.\n\nQuestion: "
                           "When did Mira move from Zürich to München?")
