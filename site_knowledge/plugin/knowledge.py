"""Turns plugin settings into compiler inputs: ontology sources, prompt, browser options."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from site_knowledge.build.compiler import PromptParts
from site_knowledge.build.derived import derived_facts
from site_knowledge.build.model import Source
from site_knowledge.build.ontology import load_ontology, ontology_sources
from site_knowledge.build.prompt import (
    no_model_text,
    refusal_text,
    render_site_prompt,
    render_system_prompt,
)

if TYPE_CHECKING:
    from site_knowledge.browser.assets import BrowserOptions


def load_knowledge_inputs(ontology: str | None, site_name: str) -> tuple[list[Source], PromptParts]:
    """Ontology sources plus derived facts, and the prompt; a site without ontology gets the
    generic prompt and page sources only."""
    texts = (refusal_text(site_name), no_model_text())
    if not ontology:
        return [], PromptParts(render_site_prompt(site_name), *texts)
    ont = load_ontology(Path(ontology))
    sources = [*ontology_sources(ont), derived_facts(ont, date.today())]
    return sources, PromptParts(render_system_prompt(ont, site_name), *texts)


def browser_options(config: Any) -> BrowserOptions:
    """The chat box's options from the plugin config."""
    from site_knowledge.browser.assets import BrowserOptions

    return BrowserOptions(gateways=list(config.gateways), engines=list(config.engines),
                          webllm_url=config.webllm_url, wllama_model=config.wllama_model,
                          cdn=config.cdn)
