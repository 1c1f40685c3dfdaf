// Web Worker: loads the artifact, its sidecars and the query encoder, then embeds and searches
// so that typing never blocks the page, and grounds answers with the index's tokenizer and IDF
// (grounding.js). Messages: {id, type: "init"|"search"|"notice"|"refusal"|"ground", ...}.

import { expandArtifact, withSidecars } from "./artifact.js";
import { fetchBytes } from "./fetch.js";
import { Encoder } from "./encoder.js";
import { SiteGrounding } from "./grounding.js";
import { Index, gateQuery, retrievalQuery } from "./retrieval.js";

let index = null;
let encoder = null;
let grounding = null;

async function init({ artifactUrl, vendorBase }, progress) {
  const expanded = await fetch(artifactUrl).then((r) => {
    if (!r.ok) throw new Error(`${artifactUrl}: HTTP ${r.status}`);
    return r.json().then(expandArtifact);
  });
  // The progress bar follows the vectors; the gate's reference file is small.
  const readBytes = (name) =>
    fetchBytes(new URL(name, artifactUrl), name === expanded.vectors.file ? (l, t) => progress("artifact", l, t) : undefined);
  const [{ artifact, vectors }, enc] = await Promise.all([
    withSidecars(expanded, readBytes),
    Encoder.load(vendorBase, { maxTokens: expanded.embedding.max_tokens, onProgress: progress }),
  ]);
  const started = performance.now();
  index = new Index(artifact, vectors);
  grounding = SiteGrounding.fromIndex(index);
  encoder = enc;
  const { prompt, retrieval, site, gate } = artifact;
  return { meta: { prompt, retrieval, site, gate, passages: artifact.passages.length }, indexMs: performance.now() - started };
}

/** The question (with its earlier questions, oldest first) searched: the gate reads the
 * retrieval query when the question refers back, else the question alone; the ranking reads the
 * retrieval query without the names the site never uses. */
async function search({ question, history, topK, mode }) {
  const t0 = performance.now();
  const turns = history.map((earlier) => ({ question: earlier }));
  const followupTurns = index.artifact.retrieval.followup_turns;
  const text = gateQuery(question, turns, followupTurns);
  const ranking = retrievalQuery(grounding.siteWords().withoutUnknown(question), turns, followupTurns);
  const rankText = ranking === text ? null : ranking;
  const vector = await encoder.embed(text);
  const rankVector = rankText === null ? null : await encoder.embed(rankText);
  const t1 = performance.now();
  const found = index.search(text, vector, { topK, mode, rankText, rankVector });
  const t2 = performance.now();
  return { ...found, timings: { embedMs: t1 - t0, searchMs: t2 - t1 } };
}

/** The premise notice for a question: "The site never mentions: ..." or "". */
function notice({ question }) {
  return grounding.premiseNotice(question);
}

/** A finished answer checked against its evidence ({label, text, fiction}) and the facts. */
function ground({ answer, question, evidence }) {
  const { text, cited, changed, grounded, factCited, declined } = grounding.ground(answer, question, evidence);
  return { text, cited, changed, grounded, declined, facts: factCited.map((n) => grounding.factPassages[n - 1]) };
}

/** The gate's refusal for a question, opened by what it names that the site never does. */
function refusal({ question, text }) {
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
