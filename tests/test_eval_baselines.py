"""The baselines on the current battery and a real build of the example site: the constant
refusal earns nothing on answerable items, and the gate alone earns less than it."""

from __future__ import annotations

import json

import pytest
from sites import BuiltSite

from site_knowledge.evals import runner
from site_knowledge.evals.dataset import load_battery
from site_knowledge.evals.site import SiteIndex


@pytest.mark.slow
def test_baselines_on_the_current_battery(example_site: BuiltSite) -> None:
    site = SiteIndex.load(example_site.site_dir)
    items = load_battery().items
    baselines = runner.run_baselines(items, site)
    constant = {s.id: s for _, _, s in baselines["constant-refusal"]}
    gate = {s.id: (a, s) for _, a, s in baselines["gate-only"]}
    for item in items:
        score = constant[item.id]
        if item.must_refuse:
            assert score.score == 3, item.id
        elif item.may_refuse:
            assert score.score == 1, (item.id, score.notes)
        else:
            assert score.score == 0, (item.id, score.notes)
    constant_total = runner.summary(baselines["constant-refusal"])
    gate_total = runner.summary(baselines["gate-only"])
    assert constant_total["percent"] < 35
    assert gate_total["score"] < constant_total["score"]
    # the gate refuses every gibberish item before any model; what it lets through is unanswered
    for item in items:
        answer, score = gate[item.id]
        if item.category == "gibberish":
            assert answer.refused and score.score == 3, item.id
        if not answer.refused:
            assert answer.text == "" and answer.evidence, item.id


def test_the_gate_only_engine_reports_its_thresholds_as_json(example_site: BuiltSite) -> None:
    from site_knowledge.evals.baselines import GateOnly
    from site_knowledge.retrieval import load_index

    info = GateOnly(load_index(example_site.artifact_path)).info()
    assert "elsewhere" not in info["gate"] and info["gate"]["min_margin"] <= 0.2
    assert json.loads(json.dumps(info)) == info  # the report is JSON: no reference vectors' bytes
