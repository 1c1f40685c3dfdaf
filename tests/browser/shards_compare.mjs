// Usage: node tests/browser/shards_compare.mjs DIR
// DIR holds a single artifact and its sharded layout. Each passage's own text and row are a
// query, searched over the single file (retrieval.js) and over the shards (shards.js; every
// partition open when the vectors are partitioned); each word of the texts (and names no site uses) is judged by
// SiteWords and by ShardWords. Prints {queries, same_top, same_gate, same_results (texts, urls, titles), words,
// same_words}.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expandArtifact, withSidecars } from "../../site_knowledge/browser/artifact.js";
import { Index } from "../../site_knowledge/browser/retrieval.js";
import { ShardedIndex } from "../../site_knowledge/browser/shards.js";
import { SiteWords, WORD } from "../../site_knowledge/browser/words.js";

const [dir] = process.argv.slice(2);
const read = async (name) => {
  const bytes = readFileSync(join(dir, name));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};
const { artifact, vectors } = await withSidecars(expandArtifact(JSON.parse(readFileSync(join(dir, "site-knowledge.json"), "utf8"))), read);
const single = new Index(artifact, vectors);
const manifest = JSON.parse(readFileSync(join(dir, "site-knowledge.shards.json"), "utf8"));
const sharded = await ShardedIndex.open(manifest, read, { probes: manifest.shards.dense.files?.length });
let [sameTop, sameGate, sameResults] = [0, 0, 0];
const d = single.dimension;
for (let i = 0; i < single.passages.length; i++) {
  const text = single.passages[i].text.split(/\s+/).slice(0, 8).join(" ");
  const vector = single.vectors.slice(i * d, (i + 1) * d);
  const a = single.search(text, vector);
  const b = await sharded.search(text, vector);
  const ids = (found) => JSON.stringify(found.results.map((r) => r.id));
  if (ids(a) === ids(b)) sameTop += 1;
  if (a.gate.answerable === b.gate.answerable && a.gate.coverage === b.gate.coverage && a.gate.cosine === b.gate.cosine) sameGate += 1;
  if (JSON.stringify(a.results.map((r) => [r.text, r.url, r.title])) === JSON.stringify(b.results.map((r) => [r.text, r.url, r.title]))) sameResults += 1;
}
const words = [...new Set([...single.passages.flatMap((p) => [...p.text.matchAll(WORD)].map(([w]) => w)), "Spotify", "Zebrafish", "MBA", "Qx"])];
const siteWords = new SiteWords(single.bm25.postings.keys(), single.stopwords);
let sameWords = 0;
for (const word of words) {
  await sharded.prepareWords(word);
  if (siteWords.uses(word) === sharded.siteWords.uses(word)) sameWords += 1;
}
console.log(JSON.stringify({ queries: single.passages.length, same_top: sameTop, same_gate: sameGate, same_results: sameResults, words: words.length, same_words: sameWords }));
