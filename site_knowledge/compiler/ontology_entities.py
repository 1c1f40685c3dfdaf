"""Render the generic form's ENTITIES as fact sources that cite the pages stating them.

Each entity gives one source per page its attributes name (so a passage links to the page
and anchor that state its fact), one section per attribute. Pages are known only once the
site is rendered, so this runs at compile time, not when the ontology file is loaded.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from site_knowledge.compiler.compiler import PageInput
from site_knowledge.compiler.model import BuildError, Source
from site_knowledge.compiler.ontology import Attribute, Entity, Ontology
from site_knowledge.compiler.ontology_sources import bounded_sections
from site_knowledge.retrieval.artifact_form import source_id_for


def entity_sources(ont: Ontology, pages: Sequence[PageInput]) -> list[Source]:
    """One ``fact`` source per entity and cited page, in the file's order.

    Args:
        ont: a validated ontology.
        pages: the site's published pages; every attribute's source must be one of them.

    Returns:
        Sources of kind ``ontology`` with ids ``<entity id>-<page id>``.

    Raises:
        BuildError: an attribute names a page that is not published, or an anchor the page
            does not have; the error names the entity, the attribute and the page.
    """
    by_path = {page.src_path: page for page in pages}
    sources = []
    for entity in ont.entities:
        cited: dict[str, list[Attribute]] = {}
        for attribute in entity.attributes:
            _check_cited(ont.file, attribute, by_path)
            cited.setdefault(attribute.page, []).append(attribute)
        sources += [_source(entity, by_path[path], attributes) for path, attributes in cited.items()]
    return sources


def fact_sentence(entity: Entity, attribute: Attribute) -> str:
    """``"NetBox's licence: Apache 2.0 (as of August 2026)."``: a list reads ``"a, b, c"``."""
    owner = f"{entity.name}'" if entity.name.endswith("s") else f"{entity.name}'s"
    when = f" (as of {attribute.as_of})" if attribute.as_of else ""
    text = f"{owner} {attribute.name}: {', '.join(attribute.values)}{when}"
    return text if text.endswith((".", "!", "?")) else text + "."


def _source(entity: Entity, page: PageInput, attributes: list[Attribute]) -> Source:
    kind = f" ({entity.kind})" if entity.kind else ""
    sections = [
        section
        for attribute in attributes
        for section in bounded_sections(f"{entity.name}: {attribute.name}", attribute.anchor,
                                        [fact_sentence(entity, attribute)])
    ]
    return Source(
        id=f"{entity.id}-{source_id_for(page.src_path)}",
        kind="ontology",
        title=f"{entity.name} facts: {page.title}",
        description=(f"Facts about {entity.name}{kind} stated on {page.title}: "
                     f"{', '.join(a.name for a in attributes)}."),
        url=page.url,
        authority="fact",
        path=None,
        sections=tuple(sections),
    )


def _check_cited(file: str, attribute: Attribute, by_path: dict[str, PageInput]) -> None:
    page = by_path.get(attribute.page)
    where = f"{file}: {attribute.where}"
    if page is None:
        close = difflib.get_close_matches(attribute.page, by_path, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise BuildError(where, f"source page {attribute.page!r} is not a published page of "
                                f"this site{hint}")
    if attribute.anchor and f'id="{attribute.anchor}"' not in page.html:
        raise BuildError(where, f"source page {attribute.page!r} has no anchor "
                                f"#{attribute.anchor}")
