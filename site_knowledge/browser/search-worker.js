// Web Worker: loads the artifact, its vectors and the query encoder, then embeds and searches
// so that typing never blocks the page. Messages: {id, type: "init"|"search", ...}.

import { expandArtifact } from "./artifact.js";
import { fetchBytes } from "./fetch.js";
import { Encoder } from "./encoder.js";
import { Index } from "./retrieval.js";

let index = null;
let encoder = null;

async function init({ artifactUrl, vendorBase }, progress) {
  const artifact = await fetch(artifactUrl).then((r) => {
    if (!r.ok) throw new Error(`${artifactUrl}: HTTP ${r.status}`);
    return r.json().then(expandArtifact);
  });
  const vectorsUrl = new URL(artifact.vectors.file, artifactUrl);
  const [vectors, enc] = await Promise.all([
    fetchBytes(vectorsUrl, (l, t) => progress("artifact", l, t)),
    Encoder.load(vendorBase, { maxTokens: artifact.embedding.max_tokens, onProgress: progress }),
  ]);
  const started = performance.now();
  index = new Index(artifact, vectors);
  encoder = enc;
  const { prompt, retrieval, site, gate } = artifact;
  return { meta: { prompt, retrieval, site, gate, passages: artifact.passages.length }, indexMs: performance.now() - started };
}

async function search({ text, topK, mode }) {
  const t0 = performance.now();
  const vector = await encoder.embed(text);
  const t1 = performance.now();
  const found = index.search(text, vector, { topK, mode });
  const t2 = performance.now();
  return { ...found, timings: { embedMs: t1 - t0, searchMs: t2 - t1 } };
}

self.onmessage = async ({ data }) => {
  const { id, type } = data;
  const progress = (what, loaded, total) => self.postMessage({ id, progress: { what, loaded, total } });
  try {
    const result = type === "init" ? await init(data, progress) : await search(data);
    self.postMessage({ id, result });
  } catch (error) {
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};
