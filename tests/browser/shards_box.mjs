// Usage: node tests/browser/shards_box.mjs SITE_DIR QUESTIONS.json
// A site built with `artifact: sharded` served over loopback to Chromium twice: as built (the
// box reads the manifest and fetches shards) and with the box pointed at the single file. Each
// time the box (search engine only) searches every question in order, then answers the first.
// Prints {sharded, single}, each with per question the top ids, the gate's decision, the
// worker's search and embedding milliseconds and the artifact bytes the server sent for it
// (the first question's include opening the box); the other bytes (encoder, runtime, code);
// and the answer to the first question.
import { readFileSync } from "node:fs";
import { override, withSite } from "./harness.mjs";

const [siteDir, questionsFile] = process.argv.slice(2);
const questions = JSON.parse(readFileSync(questionsFile, "utf8"));

const isArtifact = (path) => /\/site-knowledge\/(site-knowledge\.|shards\/)/.test(path);
const sum = (served) => served.reduce((total, r) => total + r.bytes, 0);

async function run(config) {
  return withSite(siteDir, async ({ server, session, page }) => {
    await override(page, { engines: ["search"], gateways: [], ...config });
    await page.goto(server.url);
    await page.waitForFunction(() => window.siteKnowledge);
    await page.evaluate(() => window.siteKnowledge.open());
    const asked = [];
    let seen = 0;
    for (const question of questions) {
      const found = await page.evaluate((q) => window.siteKnowledge.search(q), question);
      const served = server.served.slice(seen);
      seen = server.served.length;
      asked.push({
        question,
        ids: found.results.map((r) => r.id),
        answerable: found.gate.answerable,
        search_ms: found.timings.searchMs,
        embed_ms: found.timings.embedMs,
        artifact_bytes: sum(served.filter((r) => isArtifact(r.path))),
      });
    }
    const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), questions[0]);
    return {
      asked,
      other_bytes: sum(server.served.filter((r) => !isArtifact(r.path))),
      files: server.served.filter((r) => isArtifact(r.path)).map((r) => r.path.split("/site-knowledge/")[1]),
      answer: { refused: answer.refused, engine: answer.engine, citations: answer.citations.length },
      missing: server.missing,
      offsite: session.offsite,
    };
  });
}

const sharded = await run({});
const single = await run({ artifact: "site-knowledge.json" });
console.log(JSON.stringify({ sharded, single }));
