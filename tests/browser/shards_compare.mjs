// Usage: node tests/browser/shards_compare.mjs DIR
// DIR holds a single artifact and its sharded layout. Each passage's own text and row are a
// query, asked in its page's language or (every other one) in a language the site lacks,
// searched over the single file (retrieval.js) and over the shards (shards.js; every
// partition open when the vectors are partitioned); each word of the texts (and names no site
// uses) is judged by SiteWords and by ShardWords. Prints {queries, same_top, same_gate (the
// language kept to and the gate's signals too), same_results (texts, urls, titles), words,
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
  const lang = i % 2 ? single.sourceLangs[single.sourceOf[i]] : "de";
  const a = single.search(text, vector, { lang });
  const b = await sharded.search(text, vector, { lang });
  const ids = (found) => JSON.stringify(found.results.map((r) => r.id));
  if (ids(a) === ids(b)) sameTop += 1;
  if (a.lang === b.lang && ["answerable", "coverage", "cosine", "elsewhere"].every((k) => a.gate[k] === b.gate[k])) sameGate += 1;
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
