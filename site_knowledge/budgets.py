"""The context budgets: what each reader of the artifact may spend on evidence, history and the
answer. Written once here: the plugin's ``budgets`` option checks a site's overrides with
:func:`checked_overrides`, the compiler writes :func:`merged_budgets` into the artifact's
``prompt.budgets``, and the gateway reads its own back as a :class:`Budget`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from site_knowledge.retrieval.artifact import artifact_schema


@dataclass(frozen=True)
class Budget:
    """One reader's budget; the field defaults are the gateway's, for its 4,096-token slots."""

    evidence_chars: int = 2600
    history_chars: int = 6000
    context_tokens: int = 4096
    answer_tokens: int = 256
    max_exchanges: int = 4


FIELD_HELP = {
    "evidence_chars": "characters of evidence when no tokenizer counts the prompt",
    "history_chars": "characters of earlier exchanges when no tokenizer counts the prompt",
    "context_tokens": "the model's context window in tokens",
    "answer_tokens": "tokens kept free for the answer",
    "max_exchanges": "earlier exchanges a follow-up question sees at most",
}
"""What each field of a :class:`Budget` sets, for the configuration reference."""

READERS = {
    "gateway": Budget(),
    "browser": Budget(evidence_chars=1100, history_chars=1800, context_tokens=2048),
}
"""Each reader's default budget: the gateway in front of llama-server, the browser's small models."""

DEFAULT_BUDGETS = {reader: asdict(budget) for reader, budget in READERS.items()}
"""The defaults as the artifact's ``prompt.budgets`` holds them."""


class BudgetError(ValueError):
    """A bad budget override at ``path`` (``gateway.answer_tokens``; "" for the whole mapping)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def _minimums() -> dict[str, int]:
    """The artifact schema's lower bound for each budget field."""
    properties = artifact_schema()["$defs"]["budget"]["properties"]
    return {name: int(spec["minimum"]) for name, spec in properties.items()}


def _known(keys: Mapping[str, object]) -> str:
    return f"unknown key (known: {', '.join(keys)})"


def checked_overrides(raw: object) -> dict[str, dict[str, int]]:
    """A site's budget overrides, per reader, checked key by key.

    Args:
        raw: ``{reader: {field: integer}}`` as read from the site's configuration; None is none.

    Returns:
        The overrides, unchanged.

    Raises:
        BudgetError: naming the first bad key: an unknown reader or field, a value that is not
            an integer or is below the artifact schema's minimum, or an answer reserve that
            leaves no room for the prompt in the reader's context.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise BudgetError("", f"expected a mapping of readers ({', '.join(READERS)}), got {raw!r}")
    minimums = _minimums()
    checked: dict[str, dict[str, int]] = {}
    for reader, values in raw.items():
        if reader not in READERS:
            raise BudgetError(str(reader), _known(READERS))
        if not isinstance(values, Mapping):
            raise BudgetError(reader, f"expected a mapping of fields, got {values!r}")
        for name, value in values.items():
            path = f"{reader}.{name}"
            if name not in minimums:
                raise BudgetError(path, _known(minimums))
            if isinstance(value, bool) or not isinstance(value, int):
                raise BudgetError(path, f"expected an integer, got {value!r}")
            if value < minimums[name]:
                raise BudgetError(path, f"must be at least {minimums[name]}, got {value}")
        budget = replace(READERS[reader], **values)
        if budget.answer_tokens >= budget.context_tokens:
            raise BudgetError(f"{reader}.answer_tokens",
                              f"{budget.answer_tokens} leaves no room for the prompt in "
                              f"context_tokens {budget.context_tokens}")
        checked[reader] = dict(values)
    return checked


def merged_budgets(overrides: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """The default budgets with a site's overrides applied, reader by reader."""
    return {reader: {**values, **overrides.get(reader, {})}
            for reader, values in DEFAULT_BUDGETS.items()}
