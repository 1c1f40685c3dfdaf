// The JavaScript retrieval against the shared test vectors (tests/data/retrieval_vectors.json)
// that the Python tests also read: tokenizer cases and rankings over a fixture artifact with
// precomputed query vectors. Run by tests/test_browser_retrieval.py (node --test).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { expandArtifact, withSidecars } from "../../site_knowledge/browser/artifact.js";
import { SiteGrounding } from "../../site_knowledge/browser/grounding.js";
import { Index, diverseTop, gateQuery, retrievalQuery, tokenize } from "../../site_knowledge/browser/retrieval.js";

const DATA = join(dirname(fileURLToPath(import.meta.url)), "..", "data");
const vectors = JSON.parse(readFileSync(join(DATA, "retrieval_vectors.json"), "utf8"));
const artifactPath = join(DATA, vectors.artifact);
const { artifact, vectors: sidecar } = await withSidecars(
  expandArtifact(JSON.parse(readFileSync(artifactPath, "utf8"))),
  async (name) => new Uint8Array(readFileSync(join(dirname(artifactPath), name))).buffer,
);
const index = new Index(artifact, sidecar);
const stopwords = new Set(artifact.lexical.stopwords);
const words = SiteGrounding.fromIndex(index).siteWords();

for (const { text, tokens } of vectors.tokenizer) {
  test(`tokenize ${JSON.stringify(text)}`, () => {
    assert.deepEqual(tokenize(text, stopwords), tokens);
  });
}

for (const c of vectors.diverse) {
  test(`diverseTop: ${c.name}`, () => {
    const capped = c.capped.length ? c.capped : null;
    const score = c.scores ? (i) => c.scores[i] : null;
    assert.deepEqual(diverseTop(c.order, c.source_of, c.top_k, c.cap, c.lead, capped, score, c.lead_share ?? 0), c.kept);
  });
}

for (const c of vectors.ranking) {
  const history = c.history.map((question) => ({ question, answer: "" }));
  const query = gateQuery(c.question, history, artifact.retrieval.followup_turns);
  const vector = Float32Array.from(c.query_vector);
  const ranking = retrievalQuery(words.withoutUnknown(c.question), history, artifact.retrieval.followup_turns);
  const rankText = ranking === query ? null : ranking;
  const rankVector = c.ranking_vector ? Float32Array.from(c.ranking_vector) : null;
  const name = JSON.stringify([...c.history, c.question]);
  test(`query and gate ${name}`, () => {
    assert.equal(query, c.query);
    assert.equal(rankText, c.ranking_query ?? null);
    const { gate, terms, lang } = index.search(query, vector, { topK: 4, rankText, rankVector, lang: c.lang ?? null });
    assert.deepEqual(terms, c.terms);
    assert.equal(lang, c.kept_to);
    assert.equal(gate.answerable, c.answerable);
    assert.equal(gate.has_terms, c.gate.has_terms);
    assert.ok(Math.abs(gate.coverage - c.gate.coverage) < 1e-5, `coverage ${gate.coverage}`);
    assert.ok(Math.abs(gate.cosine - c.gate.cosine) < 1e-5, `cosine ${gate.cosine}`);
    assert.ok(Math.abs(gate.elsewhere - c.gate.elsewhere) < 1e-5, `elsewhere ${gate.elsewhere}`);
  });
  for (const [mode, expected] of Object.entries(c.modes)) {
    test(`${mode} ${name}`, () => {
      const found = index.search(query, vector, { topK: 4, mode, rankText, rankVector, lang: c.lang ?? null });
      assert.deepEqual(found.results.map((r) => r.id), expected);
    });
  }
}
