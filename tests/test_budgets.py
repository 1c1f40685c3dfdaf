"""The context budgets: one set of defaults for the compiler, the gateway and the option."""

from __future__ import annotations

from dataclasses import asdict, fields

import pytest

from site_knowledge.budgets import (
    DEFAULT_BUDGETS,
    FIELD_HELP,
    READERS,
    Budget,
    BudgetError,
    checked_overrides,
    merged_budgets,
)
from site_knowledge.gateway.prompt import Budgets
from site_knowledge.retrieval.artifact import artifact_schema


def test_the_budget_is_the_artifact_schemas_budget() -> None:
    budget = artifact_schema()["$defs"]["budget"]
    assert [field.name for field in fields(Budget)] == budget["required"] == list(FIELD_HELP)
    assert set(DEFAULT_BUDGETS) == set(artifact_schema()["properties"]["prompt"]["properties"]
                                       ["budgets"]["required"])


def test_the_gateway_reads_its_defaults_back_from_an_artifact() -> None:
    artifact = {"prompt": {"budgets": merged_budgets({})}}
    assert asdict(Budgets.from_artifact(artifact)) == asdict(READERS["gateway"]) == asdict(Budgets())


def test_budget_overrides_apply_per_reader() -> None:
    budgets = merged_budgets({"browser": {"evidence_chars": 900}})
    assert budgets["browser"] == {**DEFAULT_BUDGETS["browser"], "evidence_chars": 900}
    assert budgets["gateway"] == DEFAULT_BUDGETS["gateway"]
    assert DEFAULT_BUDGETS["browser"]["evidence_chars"] != 900, "defaults are not mutated"


def test_overrides_within_bounds_pass_unchanged() -> None:
    raw = {"gateway": {"context_tokens": 8192, "answer_tokens": 512}, "browser": {"history_chars": 0}}
    assert checked_overrides(raw) == raw
    assert checked_overrides(None) == {}


@pytest.mark.parametrize(("raw", "path", "message"), [
    ({"gateway": {"answer_tokens": 1.5}}, "gateway.answer_tokens", "expected an integer, got 1.5"),
    ({"gateway": {"context_tokens": 200}}, "gateway.answer_tokens",
     "256 leaves no room for the prompt in context_tokens 200"),
    ({1: {}}, "1", "unknown key (known: gateway, browser)"),
    ("gateway", "", "expected a mapping of readers (gateway, browser), got 'gateway'"),
])
def test_a_bad_override_names_its_key(raw: object, path: str, message: str) -> None:
    with pytest.raises(BudgetError) as caught:
        checked_overrides(raw)
    assert (caught.value.path, caught.value.message) == (path, message)
