// Usage: node benchmarks/bench_shards.mjs INPUT.json OUT.json
// INPUT: {sites: [{name, dir, partitioned, questions: [{set, text, vector, rank_text,
// rank_vector}]}], probes: [n, ...]} where dir holds site-knowledge.json and a sharded layout
// reading the vectors whole, and partitioned the same with the vectors in partitions.
// For each site, every question is searched with the single file (retrieval.js Index) and
// with the shards (shards.js ShardedIndex: whole, then partitioned at each probe count) on
// the same query vectors:
// top-4 and gate agreement, bytes fetched (opening, each question on a fresh cache, and each
// later question with the cache of the ones before), and search milliseconds.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { expandArtifact, withSidecars } from "../site_knowledge/browser/artifact.js";
import { Index } from "../site_knowledge/browser/retrieval.js";
import { ShardedIndex } from "../site_knowledge/browser/shards.js";

const TOP_K = 4;
const [inputFile, outFile] = process.argv.slice(2);
const input = JSON.parse(readFileSync(inputFile, "utf8"));

const readFrom = (dir) => async (name) => {
  const bytes = readFileSync(join(dir, name));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : 0;
}

const summary = (values) => ({ p50: percentile(values, 0.5), p95: percentile(values, 0.95), max: Math.max(0, ...values) });

async function search(index, q) {
  const options = { topK: TOP_K, rankText: q.rank_text, rankVector: q.rank_vector && Float32Array.from(q.rank_vector) };
  const started = performance.now();
  const found = await index.search(q.text, Float32Array.from(q.vector), options);
  return { found, ms: performance.now() - started };
}

async function measure(site, dir, single, probes) {
  const manifest = JSON.parse(readFileSync(join(dir, "site-knowledge.shards.json"), "utf8"));
  const manifestBytes = readFileSync(join(dir, "site-knowledge.shards.json")).byteLength;
  const read = readFrom(dir);
  const warm = await ShardedIndex.open(manifest, read, { probes });
  const opening = manifestBytes + warm.bytes;
  const rows = [];
  for (const q of site.questions) {
    const before = warm.bytes;
    const { found, ms } = await search(warm, q);
    const later = warm.bytes - before;
    const fresh = await ShardedIndex.open(manifest, read, { probes });
    const openBytes = fresh.bytes;
    await search(fresh, q);
    const expected = single.get(q);
    rows.push({
      set: q.set,
      question: q.text,
      same_top: JSON.stringify(found.results.map((r) => r.id)) === JSON.stringify(expected.ids),
      same_gate: found.gate.answerable === expected.answerable,
      ids: found.results.map((r) => r.id),
      single_ids: expected.ids,
      fresh_bytes: fresh.bytes - openBytes,
      later_bytes: later,
      ms,
    });
  }
  const share = (key, set) => {
    const subset = rows.filter((r) => set === undefined || r.set === set);
    return subset.length ? subset.filter((r) => r[key]).length / subset.length : 1;
  };
  const sets = [...new Set(rows.map((r) => r.set))];
  return {
    probes,
    partitions: manifest.shards.dense.files?.length ?? null,
    opening_bytes: opening,
    first_question_bytes: summary(rows.map((r) => r.fresh_bytes)),
    later_question_bytes: summary(rows.slice(1).map((r) => r.later_bytes)),
    all_questions_bytes: warm.bytes + manifestBytes,
    top4_agreement: share("same_top"),
    gate_agreement: share("same_gate"),
    per_set: Object.fromEntries(sets.map((s) => [s, { questions: rows.filter((r) => r.set === s).length, top4_agreement: share("same_top", s), gate_agreement: share("same_gate", s) }])),
    search_ms: summary(rows.map((r) => r.ms)),
    disagreements: rows.filter((r) => !r.same_top || !r.same_gate).slice(0, 10),
  };
}

const out = [];
for (const site of input.sites) {
  const doc = JSON.parse(readFileSync(join(site.dir, "site-knowledge.json"), "utf8"));
  const { artifact, vectors } = await withSidecars(expandArtifact(doc), readFrom(site.dir));
  const index = new Index(artifact, vectors);
  const single = new Map();
  const singleMs = [];
  for (const q of site.questions) {
    const { found, ms } = await search(index, q);
    singleMs.push(ms);
    single.set(q, { ids: found.results.map((r) => r.id), answerable: found.gate.answerable });
  }
  const sidecars = [doc.vectors.file, doc.gate.elsewhere.file].map((name) => readFileSync(join(site.dir, name)).byteLength);
  const singleBytes = readFileSync(join(site.dir, "site-knowledge.json")).byteLength + sidecars[0] + sidecars[1];
  const sharded = [];
  sharded.push(await measure(site, site.dir, single, null));
  for (const probes of input.probes) sharded.push(await measure(site, site.partitioned, single, probes));
  out.push({ site: site.name, questions: site.questions.length, passages: artifact.passages.length, single_bytes: singleBytes, single_search_ms: summary(singleMs), sharded });
  console.log(JSON.stringify({ site: site.name, agreement: sharded.map((s) => [s.probes, s.top4_agreement, s.gate_agreement]) }));
}
writeFileSync(outFile, JSON.stringify({ sites: out }, null, 1));
