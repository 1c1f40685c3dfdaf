"""Gate calibration on a real (small) corpus with the real encoder."""

from __future__ import annotations

import numpy as np

from site_knowledge.compiler.calibrate import (
    MARGIN_COST,
    TARGET_RECALL,
    calibrate_gate,
    heading_probes,
    kept_elsewhere,
)
from site_knowledge.compiler.chunking import page_sections, source_passages
from site_knowledge.compiler.model import Source
from site_knowledge.compiler.offtopic import offtopic_questions
from site_knowledge.embedding import Encoder
from site_knowledge.retrieval.gate import decode_elsewhere
from site_knowledge.retrieval.tokenizer import STOPWORDS, indexed_text, tokenize

TOPICS = {
    "Rack elevations": "Racks hold devices in numbered units; the elevation drawing shows both faces.",
    "Cable tracing": "Trace a cable from an interface through patch panels to its far end.",
    "Power feeds": "A power feed connects a distribution panel to the rack's power strip.",
    "VLAN groups": "VLAN groups scope VLAN IDs to a site, a location or a cluster of devices.",
    "Prefix utilisation": "A prefix reports how much of its address space child ranges use.",
    "Webhooks": "Event rules send a webhook to an external URL when objects change.",
    "Custom fields": "Custom fields add typed attributes to any object, with validation rules.",
    "Journaling": "Journal entries record notes about an object with a kind and a timestamp.",
}


def test_heading_probes_leave_their_own_section_out():
    probes = heading_probes(["A > Install", "A > Install", "B > Usage", ""])
    assert {p.question.rstrip("?.") for p in probes} >= {"What is Install", "Tell me about Usage"}
    assert {p.left_out for p in probes} == {frozenset({0, 1}), frozenset({2})}


def test_calibrated_gate_passes_probes_and_refuses_off_topic():
    html = "".join(f"<h2 id='t{i}'>{h}</h2><p>{t} {t}</p>" for i, (h, t) in enumerate(TOPICS.items()))
    source = Source("docs", "page", "Docs", "", "docs/", "prose", "docs.md", page_sections(html, "Docs"))
    passages = source_passages(source)
    texts = [indexed_text("Docs", p.heading, p.text) for p in passages]
    encoder = Encoder()
    stopwords = frozenset(STOPWORDS)
    gate, reference = calibrate_gate([tokenize(t, stopwords) for t in texts], [p.heading for p in passages],
                                     encoder.encode(texts), stopwords, encoder.encode)
    report = gate["calibration"]
    assert report["answerable_probes"] == len(TOPICS)
    assert report["offtopic_probes"] == len(offtopic_questions()) >= 200
    assert report["recall"] >= TARGET_RECALL - MARGIN_COST
    assert report["false_accept"] <= 0.1
    assert report["false_accept_by_section"]["injections"] <= 0.1
    assert 0 <= gate["min_coverage"] <= 1 and gate["min_cosine"] <= gate["strong_cosine"]
    assert -0.4 <= gate["min_margin"] <= 0.2
    assert gate["elsewhere"]["count"] == len(offtopic_questions())
    assert len(reference) == 388 * len(offtopic_questions())
    elsewhere = decode_elsewhere({"elsewhere": {**gate["elsewhere"], "vectors": reference}}, 384)
    kept = len(offtopic_questions()) - len(gate["elsewhere"]["left_out"])
    assert elsewhere.shape == (kept, 384) == (report["elsewhere_kept"], 384)
    assert np.allclose(np.linalg.norm(elsewhere, axis=1), 1.0, atol=0.02)


def test_a_corpus_too_small_gets_an_open_gate():
    gate, reference = calibrate_gate([["only"]], ["One"], Encoder().encode(["only"]), frozenset(),
                                     Encoder().encode)
    assert gate["strong_cosine"] > 1 and gate["min_cosine"] == 0
    assert gate["min_margin"] == -3
    assert gate["elsewhere"]["left_out"] == list(range(gate["elsewhere"]["count"]))
    assert len(reference) == 388 * gate["elsewhere"]["count"]


def test_questions_the_site_matches_as_well_as_its_own_are_not_kept_as_elsewhere():
    kept = kept_elsewhere(np.array([0.3, 0.5, 0.7]), np.array([0.2, 0.49, 0.5, 0.9]))
    assert kept.tolist() == [True, True, False, False]
