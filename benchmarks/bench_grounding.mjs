// Usage: node benchmarks/bench_grounding.mjs ARTIFACT_JSON [ARTIFACT_JSON ...]
// What the box's grounding (site_knowledge/browser/grounding.js) costs in the search worker,
// against the cost of loading the index itself, measured side by side in one process: the
// index build (baseline), SiteGrounding set-up, the first premise notice (builds the site's
// word stems), then per question the premise notice, the claim check of an answer made of the
// evidence's own sentences plus one invented one, and a BM25 search for comparison. Prints
// one JSON object per artifact; times are machine-bound, the ratios are the result.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expandArtifact, withSidecars } from "../site_knowledge/browser/artifact.js";
import { SiteGrounding } from "../site_knowledge/browser/grounding.js";
import { Index, ranked, tokenize } from "../site_knowledge/browser/retrieval.js";

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (x) => Math.round(x * 1000) / 1000;

function timed(fn) {
  const t0 = performance.now();
  const value = fn();
  return [performance.now() - t0, value];
}

for (const path of process.argv.slice(2)) {
  const { artifact, vectors } = await withSidecars(
    expandArtifact(JSON.parse(readFileSync(path, "utf8"))),
    async (name) => new Uint8Array(readFileSync(join(dirname(path), name))).buffer,
  );
  const [indexMs, index] = timed(() => new Index(artifact, vectors));
  const [setupMs, grounding] = timed(() => SiteGrounding.fromIndex(index));
  // Questions: each source's title, asked about; the evidence: its BM25 top 4.
  const questions = artifact.sources.slice(0, 60).map((s) => `What does the site say about ${s.title}?`);
  const [firstNoticeMs] = timed(() => grounding.premiseNotice(questions[0]));
  const notice = [];
  const ground = [];
  const search = [];
  for (const question of questions) {
    const [searchMs, order] = timed(() => ranked(index.bm25.scores(tokenize(question, index.stopwords)), 4, true));
    const evidence = order.map((i) => {
      const p = index.passages[i];
      const title = artifact.sources[index.sourceOf[i]].title;
      const label = p.heading && p.heading !== title ? `${title} > ${p.heading}` : title;
      return { label, text: p.text, fiction: artifact.sources[index.sourceOf[i]].authority === "fiction" };
    });
    const answer = `${evidence.map((e) => e.text.split(/(?<=\.)\s/)[0]).join(" ")} It was founded in 1987 by Jane Doe in Oslo.`;
    notice.push(timed(() => grounding.premiseNotice(question))[0]);
    ground.push(timed(() => grounding.ground(answer, question, evidence))[0]);
    search.push(searchMs);
  }
  console.log(JSON.stringify({
    artifact: artifact.site.name,
    passages: artifact.passages.length,
    index_ms: round(indexMs),
    grounding_setup_ms: round(setupMs),
    first_notice_ms: round(firstNoticeMs),
    first_notice_vs_index: round(firstNoticeMs / indexMs),
    notice_p50_ms: round(median(notice)),
    ground_p50_ms: round(median(ground)),
    bm25_search_p50_ms: round(median(search)),
    ground_vs_bm25_search: round(median(ground) / median(search)),
  }));
}
