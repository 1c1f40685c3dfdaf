// Web Worker: loads the artifact, its sidecars and the query encoder, then embeds and searches
// so that typing never blocks the page, and grounds answers with the index's tokenizer and IDF
// (grounding.js). Messages: {id, type: "init"|"search"|"notice"|"refusal"|"ground", ...}.

import { expandArtifact, withSidecars } from "./artifact.js";
import { fetchBytes } from "./fetch.js";
import { Encoder } from "./encoder.js";
import { SiteGrounding } from "./grounding.js";
import { Index, gateQuery, retrievalQuery } from "./retrieval.js";
import { SHARDS_SCHEMA, ShardedIndex } from "./shards.js";

let index = null;
let encoder = null;
let grounding = null;

/** The single artifact, loaded whole with its sidecars, and the milliseconds its index took. */
async function loadSingle(expanded, artifactUrl, progress) {
  // The progress bar follows the vectors; the gate's reference file is small.
  const readBytes = (name) =>
    fetchBytes(new URL(name, artifactUrl), name === expanded.vectors.file ? (l, t) => progress("artifact", l, t) : undefined);
  const { artifact, vectors } = await withSidecars(expanded, readBytes);
  const started = performance.now();
  return [new Index(artifact, vectors), performance.now() - started];
}

/** The sharded artifact's index: its manifest now, its shards per question. */
async function loadSharded(manifest, artifactUrl) {
  const started = performance.now();
  const index = await ShardedIndex.open(manifest, (name) => fetchBytes(new URL(name, artifactUrl)));
  return [index, performance.now() - started];
}

async function init({ artifactUrl, vendorBase }, progress) {
  const doc = await fetch(artifactUrl).then((r) => {
    if (!r.ok) throw new Error(`${artifactUrl}: HTTP ${r.status}`);
    return r.json();
  });
  // A sharded artifact's manifest: shards are fetched per question (shards.js).
  const sharded = doc.schema === SHARDS_SCHEMA;
  const expanded = sharded ? doc : expandArtifact(doc);
  const [[loaded, indexMs], enc] = await Promise.all([
    sharded ? loadSharded(doc, artifactUrl) : loadSingle(expanded, artifactUrl, progress),
    Encoder.load(vendorBase, { maxTokens: expanded.embedding.max_tokens, onProgress: progress }),
  ]);
  index = loaded;
  grounding = SiteGrounding.fromIndex(index);
  if (sharded) grounding.words = index.siteWords;
  encoder = enc;
  const { prompt, retrieval, site, gate } = index.artifact;
  const passages = sharded ? doc.counts.passages : index.artifact.passages.length;
  return { meta: { prompt, retrieval, site, gate, passages }, indexMs };
}

/** What a sharded index must fetch before grounding reads `question` (and `texts`) synchronously. */
async function prepare(question, texts = []) {
  await index.prepareWords?.(question);
  await index.prepareTerms?.([question, ...texts]);
}

/** The question (with its earlier questions, oldest first) searched: the gate reads the
 * retrieval query when the question refers back, else the question alone; the ranking reads the
 * retrieval query without the names the site never uses. */
async function search({ question, history, topK, mode, lang = null }) {
  const t0 = performance.now();
  await prepare(question);
  const turns = history.map((earlier) => ({ question: earlier }));
  const followupTurns = index.artifact.retrieval.followup_turns;
  const text = gateQuery(question, turns, followupTurns);
  const ranking = retrievalQuery(grounding.siteWords().withoutUnknown(question), turns, followupTurns);
  const rankText = ranking === text ? null : ranking;
  const vector = await encoder.embed(text);
  const rankVector = rankText === null ? null : await encoder.embed(rankText);
  const t1 = performance.now();
  const found = await index.search(text, vector, { topK, mode, rankText, rankVector, lang });
  const t2 = performance.now();
  return { ...found, timings: { embedMs: t1 - t0, searchMs: t2 - t1 } };
}

/** The premise notice for a question: "The site never mentions: ..." or "". */
async function notice({ question }) {
  await prepare(question);
  return grounding.premiseNotice(question);
}

/** A finished answer checked against its evidence ({label, text, fiction}) and the facts. */
async function ground({ answer, question, evidence }) {
  await prepare(question, [answer, ...evidence.map((p) => p.text)]);
  const { text, cited, changed, grounded, factCited, declined } = grounding.ground(answer, question, evidence);
  return { text, cited, changed, grounded, declined, facts: factCited.map((n) => grounding.factPassages[n - 1]) };
}

/** The gate's refusal for a question, opened by what it names that the site never does. */
async function refusal({ question, text }) {
  await prepare(question);
  return grounding.refusal(question, text);
}

const HANDLERS = { init, search, notice, refusal, ground };

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  const progress = (what, loaded, total) => self.postMessage({ id, progress: { what, loaded, total } });
  try {
    const result = await HANDLERS[type](data, progress);
    self.postMessage({ id, result });
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};
