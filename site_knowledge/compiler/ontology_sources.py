"""Render a validated ontology as citable sources: one per category, in bounded sections."""

from __future__ import annotations

from collections.abc import Callable

from site_knowledge.compiler.model import MAX_PASSAGE_CHARS, Section, Source
from site_knowledge.compiler.ontology import CATEGORIES, Ontology, Story, format_month, format_span

_SOURCE_INFO = {
    "PROFILE": (
        "profile", "Profile", "Who {name} is, where {short} lives and works now, and contacts."
    ),
    "CAREER": ("career", "Career timeline", "Employers, job titles, dates and job locations."),
    "EDUCATION": ("education", "Education", "Degrees, institutions, dates and locations."),
    "LOCATION_HISTORY": (
        "geography",
        "Residence and relocation timeline",
        "Where {short} lived and when, including periods without an employer.",
    ),
    "SKILLS": ("skills", "Skills", "Programming languages, tools and spoken languages."),
    "PROJECTS": ("projects", "Projects", "Side projects with year, summary and technology."),
    "AWARDS": ("awards", "Awards", "Awards and distinctions with year and issuer."),
    "ARCHITECTURE_RECEIPTS": (
        "architecture",
        "How this site's ask box works",
        "Claims about this site and evidence.",
    ),
    "BRANCHES": (
        "fiction-branches",
        "Fiction: alternate-universe careers",
        "Clearly labelled fiction, never evidence about the real {short}.",
    ),
    "LORE": (
        "fiction-lore",
        "Fiction: running jokes",
        "Clearly labelled fiction, never evidence about the real {short}.",
    ),
}


def ontology_sources(ont: Ontology) -> list[Source]:
    """One source per non-empty category of the person form, each cut into sections of at
    most 900 characters (the generic form's ENTITIES: :mod:`.ontology_entities`).

    Args:
        ont: a validated ontology.

    Returns:
        Sources of kind ``ontology`` in CATEGORIES order, with ``path`` None; none for a file
        without PROFILE.
    """
    if ont.profile is None:
        return []
    sources = []
    for category in CATEGORIES:
        sections = _category_sections(ont, category)
        if not sections:
            continue
        ident, title, description = _SOURCE_INFO[category]
        names = {"name": ont.person.name, "short": ont.person.short_name}
        sources.append(
            Source(
                id=ident,
                kind="ontology",
                title=title,
                description=description.format(**names),
                url=ont.urls[category],
                authority=ont.authority[category],
                path=None,
                sections=tuple(sections),
            )
        )
    return sources


def bounded_sections(heading: str, anchor: str, sentences: list[str]) -> list[Section]:
    """Pack sentences into sections of at most MAX_PASSAGE_CHARS, never splitting a sentence
    that fits; a longer one is split between words. Continuations say so in the heading."""
    pieces = [p for s in sentences for p in _split_words(s, MAX_PASSAGE_CHARS)]
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 1 + len(piece) <= MAX_PASSAGE_CHARS:
            chunks[-1] += " " + piece
        else:
            chunks.append(piece)
    return [
        Section(heading if i == 0 else f"{heading} (continued)", text, anchor)
        for i, text in enumerate(chunks)
    ]


def _split_words(sentence: str, limit: int) -> list[str]:
    out: list[str] = []
    for word in sentence.split():
        if out and len(out[-1]) + 1 + len(word) <= limit:
            out[-1] += " " + word
        else:
            out.append(word[:limit])
    return out


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?")) else text + "."


def _profile(ont: Ontology) -> list[Section]:
    p = ont.person
    links = "; ".join(f"{label}: {url}" for label, url in p.links)
    sentences = [
        f"{p.name} (known as {p.short_name}). {_sentence(p.headline)}",
        f"{p.short_name} currently lives in {p.current_location}.",
        *(f"{p.short_name} currently works as {job.title} at {job.company}."
          for job in ont.career if job.end is None),
        f"Email: {p.email}.",
        *([f"Links: {links}."] if links else []),
        p.summary,
    ]
    return bounded_sections(p.name, "", sentences)


def _career(ont: Ontology) -> list[Section]:
    out = []
    for job in ont.career:
        if job.end is None:
            first = (
                f"{ont.person.name} works as {job.title} at {job.company} in {job.place}, "
                f"since {format_month(job.start)} (current job)."
            )
        else:
            first = (
                f"{ont.person.name} worked as {job.title} at {job.company} in {job.place}, "
                f"from {format_span(job.start, job.end)}."
            )
        notes = [f"At {job.company}: {_sentence(n)}" for n in job.notes]
        out += bounded_sections(f"{job.company}, {job.title}", job.id, [first, *notes])
    return out


def _education(ont: Ontology) -> list[Section]:
    out = []
    for study in ont.education:
        first = (
            f"{ont.person.name} studied {study.field} at {study.institution} in "
            f"{study.place}, from {format_span(study.start, study.end)} (degree: {study.degree_named()})."
        )
        notes = [_sentence(n) for n in study.notes]
        out += bounded_sections(f"{study.institution}, {study.degree}", study.id, [first, *notes])
    return out


def _geography(ont: Ontology) -> list[Section]:
    out = []
    for res in ont.residences:
        if res.end is None:
            first = (
                f"{ont.person.name} has lived in {res.place}, since "
                f"{format_month(res.start)} (current home)."
            )
        else:
            first = f"{ont.person.name} lived in {res.place}, from {format_span(res.start, res.end)}."
        out += bounded_sections(str(res.place), res.id, [first, *map(_sentence, res.notes)])
    return out


def _skills(ont: Ontology) -> list[Section]:
    return [
        s
        for group, items in ont.skills
        for s in bounded_sections(
            group, "skills", [f"{ont.person.short_name}'s skills ({group}): {', '.join(items)}."]
        )
    ]


def _projects(ont: Ontology) -> list[Section]:
    out = []
    for proj in ont.projects:
        sentences = [
            f"{proj.name} ({proj.year}), a project by {ont.person.name}: {_sentence(proj.summary)}",
            f"Technology: {', '.join(proj.tech)}.",
            *([f"Code: {proj.url}."] if proj.url else []),
        ]
        out += bounded_sections(proj.name, proj.id, sentences)
    return out


def _awards(ont: Ontology) -> list[Section]:
    out = []
    for award in ont.awards:
        text = f"{ont.person.name} received the award '{award.name}' from {award.issuer} in {award.year}."
        out += bounded_sections(award.name, award.id, [text])
    return out


def _receipts(ont: Ontology) -> list[Section]:
    out = []
    for receipt in ont.receipts:
        sentences = [
            f"Claim: {_sentence(receipt.claim)}",
            f"Evidence: {_sentence(receipt.evidence)}",
        ]
        out += bounded_sections(receipt.claim, receipt.id, sentences)
    return out


def _fiction(ont: Ontology, stories: tuple[Story, ...]) -> list[Section]:
    label = f"Fiction, not a fact about the real {ont.person.short_name}:"
    out = []
    for story in stories:
        out += bounded_sections(f"{story.title} (fiction)", story.id, [label, _sentence(story.text)])
    return out


_RENDERERS: dict[str, Callable[[Ontology], list[Section]]] = {
    "PROFILE": _profile,
    "CAREER": _career,
    "EDUCATION": _education,
    "LOCATION_HISTORY": _geography,
    "SKILLS": _skills,
    "PROJECTS": _projects,
    "AWARDS": _awards,
    "ARCHITECTURE_RECEIPTS": _receipts,
    "BRANCHES": lambda ont: _fiction(ont, ont.branches),
    "LORE": lambda ont: _fiction(ont, ont.lore),
}


def _category_sections(ont: Ontology, category: str) -> list[Section]:
    return _RENDERERS[category](ont)
