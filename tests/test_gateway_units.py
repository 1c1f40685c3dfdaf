"""Gateway parts on their own: admission order, prompt assembly, citations, metrics bounds."""

from __future__ import annotations

import asyncio

import pytest

from site_knowledge.gateway import prompt
from site_knowledge.gateway.admission import AdmissionQueue, QueueFull, QueueTimeout, VisitorBusy
from site_knowledge.gateway.config import Limits
from site_knowledge.gateway.metrics import MAX_SAMPLES, Metrics, Sample, percentile
from site_knowledge.gateway.policy import Exchange, RateLimiter, Refusal, parse_body
from site_knowledge.llama.model import ModelVerificationError, verify_model
from site_knowledge.retrieval.index import Hit, PassageRecord, SourceRecord


def test_admission_is_fifo_and_bounded():
    async def scenario() -> None:
        queue = AdmissionQueue(max_waiters=3)
        first = queue.enter()
        assert first.active
        waiters = [queue.enter() for _ in range(3)]
        assert [w.position for w in waiters] == [1, 2, 3]
        with pytest.raises(QueueFull):
            queue.enter()
        waiters[1].release()
        assert queue.left_waiting == 1
        assert [waiters[0].position, waiters[2].position] == [1, 2]
        first.release()
        assert waiters[0].active and waiters[2].position == 1
        waiters[0].release()
        assert waiters[2].active and queue.depth == 0

    asyncio.run(scenario())


def test_one_owner_holds_at_most_its_share_of_the_places():
    async def scenario() -> None:
        queue = AdmissionQueue(max_waiters=10, per_owner=2)
        mine = [queue.enter("a"), queue.enter("a")]
        with pytest.raises(VisitorBusy):
            queue.enter("a")
        other = queue.enter("b")
        assert other.position == 2 and queue.held_by("a") == 2
        mine[0].release()
        assert mine[1].active and queue.held_by("a") == 1
        assert queue.enter("a").position == 2
        assert queue.enter().position == 3  # the gateway's own work has no share

    asyncio.run(scenario())


def test_waiter_sees_positions_then_times_out():
    async def scenario() -> list[int | None]:
        queue = AdmissionQueue()
        queue.enter()
        waiter = queue.enter()
        seen: list[int | None] = []
        with pytest.raises(QueueTimeout):
            async for position in waiter.wait(heartbeat_s=0.05, max_wait_s=0.2):
                seen.append(position)
        assert waiter.released and queue.depth == 0
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == 1 and None in seen


def _H(title: str, heading: str, text: str, url: str) -> Hit:
    source = SourceRecord(title.lower(), "page", title, "", url.split("#")[0], "prose", None)
    return Hit(PassageRecord(f"{source.id}#0", source.id, heading, text, url), source, 1.0, 1, 1)


def test_messages_are_system_frozen_history_then_numbered_evidence():
    hits = [_H("Career", "Kestrel", "He built maps.", "cv/#kestrel"), _H("Home", "", "Hi.", "")]
    evidence = prompt.evidence_from_hits(hits)
    history = [Exchange("Where did he work?", "At Kestrel [1] in Berlin [2].")]
    built = prompt.messages("SYSTEM", history, evidence, "When?")
    assert [m["role"] for m in built] == ["system", "user", "assistant", "user"]
    assert built[0]["content"] == "SYSTEM"
    assert built[2]["content"] == "At Kestrel in Berlin."
    assert "[1] Career > Kestrel (cv/#kestrel)\nHe built maps." in built[3]["content"]
    assert "[2] Home ()\nHi." in built[3]["content"]
    assert built[3]["content"].endswith("Question: When?")


def test_citations_resolve_in_order_and_drop_unknown_numbers():
    evidence = prompt.evidence_from_hits(
        [_H("A", "x", "t", "a/#x"), _H("B", "", "t", "b/")]
    )
    cited = prompt.citations("See [2], then [7] and [1] and [2] again.", evidence)
    assert cited == [{"n": 2, "url": "b/", "title": "B", "id": "b#0"},
                     {"n": 1, "url": "a/#x", "title": "A > x", "id": "a#0"}]


def test_character_budgets_keep_newest_history_and_best_evidence():
    budgets = prompt.Budgets(evidence_chars=10, history_chars=13)
    history = [Exchange("q1", "a" * 8), Exchange("q2", "b" * 8), Exchange("q3", "c")]
    evidence = prompt.evidence_from_hits([_H("A", "", "x" * 8, "a/"), _H("B", "", "y" * 8, "b/")])
    kept_history, kept_evidence = prompt.by_characters(history, evidence, budgets)
    assert [e.question for e in kept_history] == ["q2", "q3"]
    assert [e.n for e in kept_evidence] == [1]


def test_token_budget_drops_history_then_passages():
    async def scenario() -> tuple[int, int]:
        evidence = prompt.evidence_from_hits([_H("A", "", "x" * 50, "a/")] * 3)
        history = [Exchange("q" * 50, "a" * 50)] * 2

        async def count(messages: list[dict[str, str]]) -> int:
            return sum(len(m["content"]) for m in messages)

        budgets = prompt.Budgets(context_tokens=300, answer_tokens=100)
        built, kept, tokens = await prompt.assemble("S", history, evidence, "Q?", budgets, count)
        assert tokens is not None and tokens <= 200
        return len(built), len(kept)

    assert asyncio.run(scenario()) == (2, 2)


def test_parse_body_bounds():
    limits = Limits()
    ok = parse_body(b'{"question": " hi ", "history": [{"question": "a", "answer": "b"}]}', limits)
    assert ok.question == "hi" and ok.history == (Exchange("a", "b"),)
    cases = {
        b"{": "invalid_json",
        b"[]": "invalid_request",
        b'{"question": 3}': "invalid_request",
        b'{"question": "x", "extra": 1}': "invalid_request",
        b'{"question": "x", "history": [1]}': "invalid_request",
        b'{"question": "' + b"x" * 1001 + b'"}': "question_too_long",
    }
    for body, code in cases.items():
        with pytest.raises(Refusal) as caught:
            parse_body(body, limits)
        assert caught.value.code == code


def test_parse_body_takes_the_page_language_as_a_tag_only():
    limits = Limits()
    assert parse_body(b'{"question": "x"}', limits).lang is None
    assert parse_body(b'{"question": "x", "lang": "zh-Hant"}', limits).lang == "zh-Hant"
    assert parse_body(b'{"question": "x", "lang": "pt_BR"}', limits).lang == "pt_BR"
    for lang in (b'""', b'"e"', b'"english please"', b'"zh-"', b"7", b'"<|im_start|>"',
                 b'"' + b"a" * 2 + b"-abcdefgh" * 4 + b'"'):
        with pytest.raises(Refusal) as caught:
            parse_body(b'{"question": "x", "lang": ' + lang + b"}", limits)
        assert caught.value.code == "invalid_request"
        assert caught.value.message.startswith("lang must be a language tag"), lang


def test_rate_limiter_per_visitor_then_global():
    limiter = RateLimiter(per_visitor=2, overall=3)
    limiter.check("a")
    limiter.check("a")
    with pytest.raises(Refusal) as caught:
        limiter.check("a")
    assert caught.value.status == 429 and "Retry-After" in caught.value.headers
    limiter.check("b")
    with pytest.raises(Refusal) as caught:
        limiter.check("c")
    assert caught.value.code == "busy"


def test_metrics_keep_at_most_512_samples_and_only_numbers():
    m = Metrics()
    for i in range(MAX_SAMPLES + 40):
        m.settle(Sample(at=float(i), outcome="completed", latency_ms=float(i), ttft_ms=1.0,
                        output_tokens=3))
    snap = m.snapshot(ready=True, active=0, waiting=0, detail=True)
    assert len(snap["samples"]) == MAX_SAMPLES
    assert snap["outcomes"]["completed"] == MAX_SAMPLES + 40
    assert snap["tokens"]["output"] == 3 * (MAX_SAMPLES + 40)
    for sample in snap["samples"]:
        assert all(isinstance(v, int | float) or k == "outcome" for k, v in sample.items())
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0


def test_model_verification(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    digest = "3bbd3ae2e0aba1b6a3e05a2a7a11c5f29c0e77a53a9a5ecd1e8a98e2b8b1d1c8"
    with pytest.raises(ModelVerificationError, match="mismatch"):
        verify_model(model, digest)
    with pytest.raises(ModelVerificationError, match="not found"):
        verify_model(tmp_path / "absent.gguf", digest)
    import hashlib

    assert verify_model(model, hashlib.sha256(b"GGUF").hexdigest())


def test_token_counter_learns_a_bound_and_skips_only_clear_cases():
    calls: list[int] = []

    async def exact(messages: list[dict[str, str]]) -> int:
        calls.append(1)
        return sum(len(m["content"]) for m in messages) // 4

    async def scenario() -> None:
        counter = prompt.TokenCounter(exact, limit=1000)
        small = [{"role": "user", "content": "x" * 400}]
        assert await counter(small) == 100 and len(calls) == 1
        assert await counter(small) is not None and len(calls) == 1  # skipped: clearly fits
        near = [{"role": "user", "content": "x" * 3000}]
        assert await counter(near) == 750 and len(calls) == 2  # near the limit: counted
        wide = [{"role": "user", "content": "é" * 600}]
        await counter(wide)
        assert len(calls) == 3  # 1,200 bytes at worst one token each: may not fit, counted

    asyncio.run(scenario())
