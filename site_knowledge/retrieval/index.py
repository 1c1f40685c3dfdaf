"""Query-time hybrid search over one artifact: BM25 + dense + RRF, page signals, the gate."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from site_knowledge.embedding import Encoder
from site_knowledge.retrieval.artifact import ArtifactError, load_artifact
from site_knowledge.retrieval.fusion import diverse_top, rank_map, ranked
from site_knowledge.retrieval.gate import GateDecision, decide, decode_elsewhere, signals
from site_knowledge.retrieval.lexical import BM25
from site_knowledge.retrieval.tokenizer import WORD, indexed_text, tokenize
from site_knowledge.retrieval.vectors import dequantize, mean_unit_rows
from site_knowledge.retrieval.words import SiteWords

Mode = Literal["hybrid", "bm25", "dense"]
MODES: tuple[Mode, ...] = ("hybrid", "bm25", "dense")
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class SourceRecord:
    """A citable source as the artifact lists it."""

    id: str
    kind: str
    title: str
    description: str
    url: str
    authority: str
    path: str | None
    lang: str = ""


@dataclass(frozen=True)
class PassageRecord:
    """A passage as the artifact lists it."""

    id: str
    source_id: str
    heading: str
    text: str
    url: str


@dataclass(frozen=True)
class Hit:
    """One ranked passage with its fused score and its rank in each single list."""

    passage: PassageRecord
    source: SourceRecord
    score: float
    bm25_rank: int | None
    dense_rank: int | None


@dataclass(frozen=True)
class SearchResult:
    """The gate's decision and the ranked passages (empty when the gate refuses)."""

    answerable: bool
    gate: dict[str, Any]
    hits: list[Hit]
    lang: str | None = None
    """The language the search kept to (SPEC.md, "Languages"), None for the whole site."""


POINTING = re.compile(
    r"^\W*(?:and|also|but|so|or|then|what\s+about|how\s+about)\b|\b(?:it|its|itself|that|this|"
    r"these|those|they|them|their|theirs|there|then|he|him|his|she|her|hers|one|ones|former|"
    r"latter|same|such|else)\b", re.IGNORECASE)
"""Words by which a question points back to the conversation (SPEC.md, follow-ups)."""
SHORT_QUESTION = 2
"""A question of at most this many words ("Why?", "How come?") continues the conversation."""


def refers_back(question: str) -> bool:
    """The question points back to the conversation (``POINTING``) or is too short to stand
    alone (``SHORT_QUESTION`` words or fewer)."""
    return POINTING.search(question) is not None or len(WORD.findall(question)) <= SHORT_QUESTION


def retrieval_query(question: str, history: Sequence[str], turns: int) -> str:
    """The question with the last ``turns`` earlier questions that hold a word in view
    (SPEC.md, follow-ups)."""
    earlier = [q for q in history if WORD.search(q)][-turns:] if turns else []
    return " ".join([*earlier, question])


def gate_query(question: str, history: Sequence[str], turns: int) -> str:
    """What the gate reads: the retrieval query when the question refers back to the
    conversation (``refers_back``), else the question alone (SPEC.md, follow-ups)."""
    return retrieval_query(question, history, turns) if refers_back(question) else question


class KnowledgeIndex:
    """An artifact loaded for search. Build once per process; ``search`` is cheap."""

    def __init__(self, artifact: dict[str, Any], vectors_blob: bytes,
                 encoder: Encoder | None = None) -> None:
        self.artifact = artifact
        self.sources = [SourceRecord(**s) for s in artifact["sources"]]
        self.sources_by_id = {s.id: s for s in self.sources}
        self.passages = [
            PassageRecord(p["id"], p["source"], p["heading"], p["text"], p["url"])
            for p in artifact["passages"]
        ]
        source_index = {s.id: i for i, s in enumerate(self.sources)}
        self._source_of = [source_index[p.source_id] for p in self.passages]
        self._ontology = [s.kind == "ontology" for s in self.sources]
        lexical = artifact["lexical"]
        self._stopwords = frozenset(lexical["stopwords"])
        passage_tokens = [
            tokenize(indexed_text(self.sources_by_id[p.source_id].title, p.heading, p.text),
                     self._stopwords)
            for p in self.passages
        ]
        page_tokens: list[list[str]] = [[] for _ in self.sources]
        for tokens, source in zip(passage_tokens, self._source_of, strict=True):
            page_tokens[source].extend(tokens)
        self._passage_terms = [frozenset(tokens) for tokens in passage_tokens]
        self._bm25 = BM25(passage_tokens, lexical["k1"], lexical["b"])
        self._page_bm25 = BM25(page_tokens, lexical["k1"], lexical["b"])
        vectors = artifact["vectors"]
        self._vectors = dequantize(vectors_blob, vectors["count"], vectors["dimension"])
        self._page_vectors = mean_unit_rows(
            self._vectors, np.array(self._source_of, dtype=np.int64), len(self.sources)
        )
        self._elsewhere = decode_elsewhere(artifact["gate"], vectors["dimension"])
        self._encoder = encoder
        self._source_langs = np.array([s.lang for s in self.sources], dtype=object)
        self._passage_langs = self._source_langs[np.array(self._source_of, dtype=np.int64)]
        self.languages = frozenset(s.lang for s in self.sources) - {""}
        self._vocabularies: dict[str, frozenset[str]] = {}

    def terms(self, text: str) -> list[str]:
        """Text tokenized as the passages are (the artifact's stopwords)."""
        return tokenize(text, self._stopwords)

    def idf(self, term: str) -> float:
        """The term's passage-level IDF (SPEC.md, "Scoring")."""
        return self._bm25.idf(self._bm25.document_frequency(term))

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Every term the site's passages use."""
        return self._bm25.vocabulary()

    @property
    def stopwords(self) -> frozenset[str]:
        return self._stopwords

    @cached_property
    def words(self) -> SiteWords:
        """The site's words, to tell a question's names the site never uses."""
        return SiteWords(self.vocabulary, self._stopwords)

    @classmethod
    def load(cls, path: Path, encoder: Encoder | None = None) -> KnowledgeIndex:
        """Load and validate an artifact file or a built site folder."""
        artifact, blob = load_artifact(path)
        return cls(artifact, blob, encoder)

    @cached_property
    def encoder(self) -> Encoder:
        """The query encoder; refuses an artifact embedded with other weights."""
        encoder = self._encoder or Encoder()
        if encoder.weights_sha256 != self.artifact["embedding"]["weights_sha256"]:
            raise ArtifactError("artifact was embedded with different model weights")
        return encoder

    def embed(self, query: str) -> npt.NDArray[np.float32]:
        """The query's unit vector."""
        return self.encoder.encode([query])[0]

    def language(self, lang: str | None) -> str | None:
        """The language a question asked in ``lang`` keeps to: ``lang``, else its primary
        subtag (``en-US`` -> ``en``), among the sources' languages; None when the site has fewer
        than two or neither is one of them (SPEC.md, "Languages")."""
        if not lang or len(self.languages) < 2:
            return None
        tag = lang.strip().lower().replace("_", "-")
        return next((t for t in (tag, tag.split("-")[0]) if t in self.languages), None)

    def _vocabulary(self, lang: str) -> frozenset[str]:
        """Every term the passages in ``lang`` use."""
        if lang not in self._vocabularies:
            self._vocabularies[lang] = frozenset().union(*(
                terms for terms, own in zip(self._passage_terms, self._passage_langs, strict=True)
                if own == lang))
        return self._vocabularies[lang]

    def _gate(self, terms: list[str], dense: npt.NDArray[np.float32],
              elsewhere: npt.NDArray[np.float32], scope: str | None) -> GateDecision:
        """The gate over the passages in ``scope`` (a language), or all when None."""
        if scope is None:
            return decide(signals(self._bm25, terms, dense, elsewhere), self.artifact["gate"])
        return decide(signals(self._bm25, terms, dense[self._passage_langs == scope], elsewhere,
                              self._vocabulary(scope)), self.artifact["gate"])

    def nearest(self, question: str) -> PassageRecord:
        """The passage closest to ``question`` in meaning, whatever the gate decides (where a
        refused question sits on the site, for the gateway's content-gap report)."""
        return self.passages[int(np.argmax(self._vectors @ self.embed(question)))]

    def search(self, question: str, history: Sequence[str] = (), mode: Mode = "hybrid",
               top_k: int = 4, query_vector: npt.NDArray[np.float32] | None = None,
               lang: str | None = None) -> SearchResult:
        """Rank passages for a question, the gate deciding first on the whole query; the
        ranking reads it without the question's names the site never uses. On a site in
        several languages, a question in one of them keeps to its passages when the gate
        accepts it there, else searches them all.

        Args:
            question: the visitor's question.
            history: earlier turns of the conversation, oldest first: the questions (the
                artifact's rule), or the answers a rewritten follow-up is searched with.
            mode: ``hybrid``, ``bm25`` or ``dense``.
            top_k: how many passages to return.
            query_vector: a precomputed embedding of the retrieval query (tests, batches).
            lang: the language the question was asked in (the page's), or None.

        Returns:
            The gate's decision with its raw scores, and the ranked hits (none if refused).
        """
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
        turns = self.artifact["retrieval"]["followup_turns"]
        query = gate_query(question, history, turns)
        terms = tokenize(query, self._stopwords)
        vector = self.embed(query) if query_vector is None else query_vector
        dense = self._vectors @ vector
        elsewhere = self._elsewhere @ vector
        scope = self.language(lang)
        gate = self._gate(terms, dense, elsewhere, scope)
        if scope is not None and not gate.answerable:
            scope = None
            gate = self._gate(terms, dense, elsewhere, scope)
        if not gate.answerable:
            return SearchResult(False, gate.as_dict(), [])
        ranking = retrieval_query(self.words.without_unknown(question), history, turns)
        ranking_terms = tokenize(ranking, self._stopwords) if ranking != query else []
        if ranking_terms:
            terms, vector = ranking_terms, self.embed(ranking)
            dense = self._vectors @ vector
        hits = self._rank(terms, vector, self._bm25.scores(terms), dense, mode, top_k, scope)
        return SearchResult(True, gate.as_dict(), hits, scope)

    def _rank(self, terms: list[str], vector: npt.NDArray[np.float32], lexical: FloatArray,
              dense: npt.NDArray[np.float32], mode: Mode, top_k: int, scope: str | None,
              ) -> list[Hit]:
        settings = self.artifact["retrieval"]
        limit = settings["candidates"]
        keep = None if scope is None else self._passage_langs == scope
        bm25_order = ranked(lexical, limit, positive_only=True, keep=keep)
        dense_order = ranked(dense.astype(np.float64), limit, keep=keep)
        bm25_ranks, dense_ranks = rank_map(bm25_order), rank_map(dense_order)
        if mode == "bm25":
            order, scores = bm25_order, {i: float(lexical[i]) for i in bm25_order}
        elif mode == "dense":
            order, scores = dense_order, {i: float(dense[i]) for i in dense_order}
        else:
            confidence = self._lexical_confidence(terms, bm25_order)
            scores = self._fuse(terms, vector, bm25_ranks, dense_ranks, confidence, scope)
            order = sorted(scores, key=lambda i: (-scores[i], i))
        kept = diverse_top(order, self._source_of, top_k, settings["per_page_cap"],
                           settings.get("lead_passages", 1), self._ontology, scores.__getitem__,
                           settings.get("lead_share", 0.0))
        return [
            Hit(self.passages[i], self.sources[self._source_of[i]], scores[i],
                bm25_ranks.get(i), dense_ranks.get(i))
            for i in kept
        ]

    def _lexical_confidence(self, terms: list[str], order: list[int]) -> float:
        """The square of the share of the query's IDF mass held by the best BM25 passage
        (SPEC.md, fusion step 2)."""
        if not order:
            return 0.0
        best_terms = self._passage_terms[order[0]]
        weights = {t: self._bm25.idf(self._bm25.document_frequency(t)) for t in dict.fromkeys(terms)}
        total = sum(weights.values())
        held = sum(w for t, w in weights.items() if t in best_terms) / total if total else 0.0
        return held * held

    def _fuse(self, terms: list[str], vector: npt.NDArray[np.float32], bm25_ranks: dict[int, int],
              dense_ranks: dict[int, int], confidence: float, scope: str | None,
              ) -> dict[int, float]:
        settings = self.artifact["retrieval"]
        k, weights, authority = settings["rrf_k"], settings["weights"], settings["authority"]
        page_limit = settings["page_candidates"]
        keep = None if scope is None else self._source_langs == scope
        page_bm25 = rank_map(ranked(self._page_bm25.scores(terms), page_limit, positive_only=True,
                                    keep=keep))
        page_dense = rank_map(ranked((self._page_vectors @ vector).astype(np.float64), page_limit,
                                     keep=keep))
        about = self._section_first_in_both(bm25_ranks, dense_ranks)
        fused: dict[int, float] = {}
        for index in sorted(set(bm25_ranks) | set(dense_ranks)):
            source = self._source_of[index]
            score = 0.0
            for rank, weight in ((bm25_ranks.get(index), confidence * weights["bm25"]),
                                 (dense_ranks.get(index), weights["dense"]),
                                 (page_bm25.get(source), confidence * weights["page_bm25"]),
                                 (page_dense.get(source), weights["page_dense"])):
                if rank is not None and weight:
                    score += weight / (k + rank)
            first = about is not None and self.passages[index].url == about
            fused[index] = score if first else score * authority[self.sources[source].authority]
        return fused

    def _section_first_in_both(self, bm25_ranks: dict[int, int], dense_ranks: dict[int, int]
                               ) -> str | None:
        """The URL of the section whose passages both lists rank first (the question is about
        it), or None when their first passages are in different sections."""
        if not bm25_ranks or not dense_ranks:
            return None
        bm25_url = self.passages[min(bm25_ranks, key=bm25_ranks.__getitem__)].url
        dense_url = self.passages[min(dense_ranks, key=dense_ranks.__getitem__)].url
        return bm25_url if dense_url == bm25_url else None
