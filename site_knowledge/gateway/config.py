"""Gateway settings: every limit in one place, with the seeds' figures as defaults."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .forwarding import ProxyTrust

UPSTREAM_KINDS = ("llama", "openai")
"""``llama``: llama-server's own endpoints (slots, prompt cache, ``/props``, token counts);
``openai``: any server with a streaming ``/v1/chat/completions`` (``docs/upstreams.md``)."""


@dataclass(frozen=True)
class UpstreamSpec:
    """One model server behind the gateway.

    Args:
        url: its base URL: llama-server's root, or for ``openai`` the base URL OpenAI
            clients take (``http://host:11434/v1``; a root gets ``/v1`` added).
        kind: one of ``UPSTREAM_KINDS``.
        model: the ``model`` name sent with each request, for servers that need one.
        api_key: sent as ``Authorization: Bearer``; never shown by ``repr``.
    """

    url: str
    kind: str = "llama"
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in UPSTREAM_KINDS:
            raise ValueError(f"upstream {self.url!r}: unknown kind {self.kind!r}; "
                             f"one of {', '.join(UPSTREAM_KINDS)}")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream {self.url!r}: not an http(s) URL with a host")
        if parts.username is not None or parts.password is not None or parts.query \
                or parts.fragment:
            raise ValueError(f"upstream {self.url!r}: no credentials, query or fragment in "
                             "the URL (an API key comes from --upstream-key-env or "
                             "--upstream-key-file)")
        if self.model is not None and not self.model.strip():
            raise ValueError(f"upstream {self.url!r}: the model name is empty")
        if self.api_key is not None and not self.api_key.strip():
            raise ValueError(f"upstream {self.url!r}: the API key is empty")

    @classmethod
    def parse(cls, text: str) -> UpstreamSpec:
        """``URL`` (llama-server) or ``KIND+URL``, e.g. ``openai+http://127.0.0.1:11434/v1``.

        Raises:
            ValueError: an unknown kind or a URL that is not a bare http(s) base URL.
        """
        kind, plus, rest = text.partition("+")
        if plus and "://" not in kind:
            return cls(rest, kind)
        return cls(text)

    @property
    def headers(self) -> dict[str, str]:
        """What each request to it carries: the API key, when it has one."""
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}


def upstream_spec(upstream: str | UpstreamSpec) -> UpstreamSpec:
    """An upstream as configured: a spec, or its text form (``UpstreamSpec.parse``)."""
    return upstream if isinstance(upstream, UpstreamSpec) else UpstreamSpec.parse(upstream)


@dataclass(frozen=True)
class Limits:
    """Bounds on what a visitor may send and on what the gateway will wait for."""

    body_bytes: int = 32 * 1024
    body_read_s: float = 10.0
    """The whole body must arrive within this (408 ``body_timeout``), however slowly it drips."""
    head_s: float = 10.0
    """A connection's request line and headers must arrive within this of its opening (or of
    its previous response), else it is closed: idle and trickling sockets hold no place."""
    connections: int = 64
    """Open connections served at once; beyond them uvicorn answers 503."""
    visitor_streams: int = 4
    """Event streams one visitor may hold open at once (429 ``too_many_streams``)."""
    question_chars: int = 1_000
    history_exchanges: int = 4
    history_answer_chars: int = 4_000
    queue_waiters: int = 10
    visitor_places: int = 2
    """Places (active and waiting) one visitor may hold at once; the rest of a burst gets 429
    ``visitor_busy``, so the waiting places are shared."""
    queue_wait_s: float = 60.0
    queue_full_retry_after_s: int = 15
    heartbeat_s: float = 10.0
    visitor_requests_per_minute: int = 20
    network_requests_per_minute: int = 60
    """All the IPv6 /64s of one /48 together (429 ``network_rate_limited``)."""
    global_requests_per_minute: int = 240
    upstream_bytes: int = 1 << 20
    upstream_connect_s: float = 5.0
    upstream_first_byte_s: float = 120.0
    generation_s: float = 180.0


@dataclass(frozen=True)
class Routing:
    """How source routing runs (``site_knowledge.gateway.routing``).

    Args:
        slot: llama-server slot for routing calls (0; answers use 1).
        pages: how many candidate pages join the ontology's sources in the catalog.
        max_sources: the most sources one route may select.
        max_tokens: the routing call's output budget.
        turns: earlier exchanges shown to the router so that pronouns resolve.
        check: a ``not_on_site`` route is checked against the best passages (a second,
            one-word call) and overruled when they answer the question.
        check_passages: how many of the best passages that check reads.
    """

    slot: int = 0
    pages: int = 6
    max_sources: int = 3
    max_tokens: int = 96
    turns: int = 2
    check: bool = True
    check_passages: int = 2


@dataclass(frozen=True)
class Followups:
    """How follow-up questions are made standalone (``site_knowledge.gateway.followup``).

    Args:
        slot: llama-server slot for the rewrite (0, shared with routing; answers use 1).
        turns: earlier exchanges the rewrite reads.
        max_tokens: the rewrite's output budget.
    """

    slot: int = 0
    turns: int = 2
    max_tokens: int = 96


GROUNDING_STEPS = ("injection", "premises", "claims", "citations")
"""The grounding steps (``site_knowledge.grounding``); all run unless turned off to measure
what each adds."""


@dataclass(frozen=True)
class GatewayConfig:
    """How one gateway runs.

    Args:
        upstreams: the model servers (``UpstreamSpec``s, or their text form: a
            llama-server URL or ``KIND+URL``), tried in order before generation begins.
        allow_origins: browser origins allowed to call ``/api/ask``.
        token: the bearer token every client must present (private mode); ``None`` is
            public mode, where anyone may ask within the origins and the limits.
        answer_slot: llama-server slot for answers (0 is routing, 2 web-intent planning).
        model: name of the model file served, shown in ``/healthz``.
        proxies: the reverse proxies whose forwarding header names the visitor.
        grounding: the grounding steps that run (``GROUNDING_STEPS``).
        passages: how many passages of evidence an answer receives.
        routing: source routing on its slot before the answer, or ``None`` for the hybrid
            order alone.
        followups: a question with history is rewritten to stand alone before retrieval,
            or ``None`` to search with the earlier questions added (the artifact's rule).
    """

    upstreams: tuple[str | UpstreamSpec, ...]
    allow_origins: frozenset[str] = frozenset()
    token: str | None = None
    answer_slot: int = 1
    model: str | None = None
    limits: Limits = field(default_factory=Limits)
    proxies: ProxyTrust = field(default_factory=ProxyTrust)
    grounding: frozenset[str] = frozenset(GROUNDING_STEPS)
    passages: int = 4
    routing: Routing | None = None
    followups: Followups | None = field(default_factory=Followups)

    def __post_init__(self) -> None:
        self.upstream_specs  # noqa: B018 - a bad upstream fails here, with its reason
        if self.token is not None and not self.token.strip():
            raise ValueError("private mode needs a token that is not empty; None is public mode")

    @property
    def upstream_specs(self) -> tuple[UpstreamSpec, ...]:
        """``upstreams`` as specs, in order."""
        return tuple(upstream_spec(u) for u in self.upstreams)
