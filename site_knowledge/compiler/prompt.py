"""The stable system prompt and the fixed reader texts, rendered once at build time.

The prompt is byte-identical for the same ontology and site name (no dates, no clocks), so
every reader sends the same prefix and llama.cpp's prompt cache can keep it.
"""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from site_knowledge.compiler.ontology import Ontology, format_span

MAX_PROMPT_CHARS = 3500
MAX_PROMPT_PROJECTS = 4

_ENV = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    undefined=StrictUndefined,
    autoescape=False,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
)


def render_examples(person: bool) -> str:
    """The worked examples in the system prompt: about a made-up subject, so that readers can
    leave them out of what an answer may state (``prompt.examples`` in the artifact)."""
    return _ENV.get_template("_examples.j2").render(person=person).strip()


def render_system_prompt(ont: Ontology, site_name: str) -> str:
    """Render the system prompt: rules, identity, core timelines and a few projects.

    Args:
        ont: a validated ontology.
        site_name: the site's name as visitors see it.

    Returns:
        The prompt text, deterministic for the same inputs.
    """
    template = _ENV.get_template("system_prompt.j2")
    return (
        template.render(
            p=ont.person,
            person=ont.person.short_name,
            site_name=site_name,
            rules=ont.rules,
            career=ont.career,
            education=ont.education,
            residences=ont.residences,
            projects=ont.projects[:MAX_PROMPT_PROJECTS],
            span=format_span,
            examples=render_examples(person=True),
        ).strip()
        + "\n"
    )


def render_site_prompt(site_name: str, ont: Ontology | None = None) -> str:
    """Render the prompt for a site without a person: rules, and the subject when an ontology
    of entities names it ("about NetBox on the website NetBox Docs").

    Args:
        site_name: the site's name as visitors see it.
        ont: an ontology without PROFILE, for its entities' names and its rules.

    Returns:
        The prompt text, deterministic for the same inputs.
    """
    subject = _listed([entity.name for entity in ont.entities] if ont else [])
    template = _ENV.get_template("site_prompt.j2")
    return template.render(site_name=site_name, subject=subject, person="",
                           rules=ont.rules if ont else (),
                           examples=render_examples(person=False)).strip() + "\n"


def _listed(names: list[str], most: int = 3) -> str:
    """``"A"``, ``"A and B"``, ``"A, B and C"``, or ``"A, B, C and more"`` past ``most``."""
    if len(names) > most:
        return f"{', '.join(names[:most])} and more"
    return f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else "".join(names)


def refusal_text(site_name: str) -> str:
    """The one-sentence answer when the site holds no evidence for a question."""
    return f"That isn't covered on this site ({site_name}), so I can't answer it from here."


def no_model_text() -> str:
    """What readers show instead of an answer when no language model is available."""
    return (
        "No language model is available right now, so here are the passages from this site "
        "that best match your question."
    )
