"""The packaged off-topic questions."""

from __future__ import annotations

from site_knowledge.compiler.offtopic import offtopic_questions, offtopic_sections


def test_packaged_questions_come_in_sections_without_comments():
    sections = offtopic_sections()
    assert list(sections) == ["general", "software", "injections", "gibberish"]
    assert all(len(questions) >= 15 for questions in sections.values())
    lines = offtopic_questions()
    assert len(lines) == sum(map(len, sections.values())) == len(set(lines))
    assert not any(line.startswith("#") for line in lines)
