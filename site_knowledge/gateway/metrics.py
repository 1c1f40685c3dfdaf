"""Privacy-safe operational metrics: counts and timings, never content or identities.

A sample holds only numbers and an outcome word; at most 512 recent samples are kept and
counters reset on restart. Anyone sees the aggregates; the samples and token totals need
the gateway's token (see ``Metrics.snapshot``).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import asdict, dataclass
from typing import Any

OUTCOMES = ("completed", "truncated", "declined", "refused", "failed", "cancelled", "rejected")
"""``declined``: the model ran and the final answer declines (``done.refused`` with reason
``model`` or ``unsupported``); ``refused``: refused before any model ran (gate, router)."""
_GENERATED = ("completed", "truncated", "declined", "failed")
MAX_SAMPLES = 512


@dataclass(frozen=True)
class Sample:
    """One settled request: timings in milliseconds, token counts, outcome."""

    at: float
    outcome: str
    latency_ms: float
    queue_wait_ms: float | None = None
    ttft_ms: float | None = None
    decode_tps: float | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None


@dataclass(frozen=True)
class RouteSample:
    """One routing call: what it decided (an intent, or why it fell back) and its timings."""

    outcome: str
    latency_ms: float
    ttft_ms: float | None = None
    prompt_tokens: int | None = None
    cached_tokens: int | None = None


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile; ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q * len(ordered) + 0.5)))
    return round(ordered[rank - 1], 1)


class Metrics:
    """Counters and a bounded window of samples, rendered by ``snapshot``."""

    def __init__(self, max_samples: int = MAX_SAMPLES) -> None:
        self.started = time.time()
        self.outcomes: Counter[str] = Counter()
        self.rejections: Counter[str] = Counter()
        self.samples: deque[Sample] = deque(maxlen=max_samples)
        self.upstream_requests = 0
        self.upstream_failovers = 0
        self.queue_left = 0
        self.prompt_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.routes: Counter[str] = Counter()
        self.route_samples: deque[RouteSample] = deque(maxlen=max_samples)
        self.followups: Counter[str] = Counter()
        self.followup_ms: deque[float] = deque(maxlen=max_samples)

    def reject(self, code: str) -> None:
        self.outcomes["rejected"] += 1
        self.rejections[code] += 1

    def settle(self, sample: Sample) -> None:
        self.outcomes[sample.outcome] += 1
        self.samples.append(sample)
        self.prompt_tokens += sample.prompt_tokens or 0
        self.output_tokens += sample.output_tokens or 0
        self.cached_tokens += sample.cached_tokens or 0

    def route(self, sample: RouteSample) -> None:
        """Count a routing call (``site_knowledge.gateway.routing``)."""
        self.routes[sample.outcome] += 1
        self.route_samples.append(sample)

    def followup(self, outcome: str, latency_ms: float) -> None:
        """Count a follow-up rewrite (``site_knowledge.gateway.followup``)."""
        self.followups[outcome] += 1
        self.followup_ms.append(latency_ms)

    def rewrites(self) -> dict[str, Any]:
        """Follow-up rewrite outcomes and latency."""
        latency = list(self.followup_ms)
        return {"outcomes": dict(sorted(self.followups.items())),
                "latency_ms": {"p50": percentile(latency, 0.5),
                               "p95": percentile(latency, 0.95)}}

    def routing(self, detail: bool = False) -> dict[str, Any]:
        """Routing outcomes (intents; ``invalid_*`` fell back to the hybrid order), latency
        and time to first token; with ``detail``, the share of prompt tokens slot 0's cache
        held (like the token totals, it tells whether a prompt was seen just before)."""
        samples = list(self.route_samples)
        latency = [s.latency_ms for s in samples]
        ttft = [s.ttft_ms for s in samples if s.ttft_ms is not None]
        counted = [s for s in samples if s.prompt_tokens and s.cached_tokens is not None]
        prompt = sum(s.prompt_tokens or 0 for s in counted)
        public = {
            "outcomes": dict(sorted(self.routes.items())),
            "fallbacks": sum(n for o, n in self.routes.items() if o.startswith("invalid_")),
            "latency_ms": {"p50": percentile(latency, 0.5), "p95": percentile(latency, 0.95)},
            "ttft_ms": {"p50": percentile(ttft, 0.5), "p95": percentile(ttft, 0.95)},
        }
        if not detail:
            return public
        cached = sum(s.cached_tokens or 0 for s in counted)
        return {**public, "cached_share": round(cached / prompt, 4) if prompt else None}

    def snapshot(self, *, ready: bool, active: int, waiting: int,
                 detail: bool = False) -> dict[str, Any]:
        """The figures ``/metrics`` shows.

        Public (``detail`` false): counts, rates and percentiles only. The token totals and
        the per-request samples come only with ``detail``: a sample's ``cached_tokens``, or
        the difference of two polls of a total, tells whether a question's prompt was
        cached, that is whether someone asked it just before.
        """
        samples = list(self.samples)
        generated = [s for s in samples if s.outcome in _GENERATED]

        def series(name: str, pool: list[Sample] = samples) -> list[float]:
            return [v for s in pool if (v := getattr(s, name)) is not None]

        settled = sum(self.outcomes[o] for o in _GENERATED)
        public = {
            "ready": ready,
            "uptime_s": round(time.time() - self.started),
            "queue": {"active": active, "waiting": waiting, "left_waiting": self.queue_left},
            "outcomes": {o: self.outcomes[o] for o in OUTCOMES},
            "rejections": dict(sorted(self.rejections.items())),
            "rates": {
                "completion": round(sum(self.outcomes[o] for o in _GENERATED if o != "failed")
                                    / settled, 4) if settled else None,
                "failure": round(self.outcomes["failed"] / settled, 4) if settled else None,
            },
            "latency_ms": {"p50": percentile(series("latency_ms"), 0.5),
                           "p95": percentile(series("latency_ms"), 0.95)},
            "queue_wait_ms": {"p50": percentile(series("queue_wait_ms"), 0.5),
                              "p95": percentile(series("queue_wait_ms"), 0.95)},
            "ttft_ms": {"p50": percentile(series("ttft_ms"), 0.5),
                        "p95": percentile(series("ttft_ms"), 0.95)},
            "decode_tokens_per_s": {"p50": percentile(series("decode_tps"), 0.5)},
            "upstream": {"requests": self.upstream_requests, "failovers": self.upstream_failovers},
            "routing": self.routing(),
            "followups": self.rewrites(),
        }
        if not detail:
            return public
        outputs = series("output_tokens", generated)
        return {
            **public,
            "tokens": {
                "prompt": self.prompt_tokens,
                "output": self.output_tokens,
                "cached": self.cached_tokens,
                "average_output": round(sum(outputs) / len(outputs), 1) if outputs else None,
            },
            "routing": self.routing(detail=True),
            "samples": [
                {k: v for k, v in asdict(s).items() if v is not None} for s in samples[-MAX_SAMPLES:]
            ],
        }
