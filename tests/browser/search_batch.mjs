// Usage: node tests/browser/search_batch.mjs SITE_DIR QUESTIONS.json OUT.json [TOP_K]
// Runs window.siteKnowledge.search for each question ({question, history} or a plain string)
// in real chromium (offline) and writes {results: [{question, ids, gate, timings}],
// offsite: [...]} for the Python side to compare.
import { readFileSync, writeFileSync } from "node:fs";
import { launch, openBox, serveStatic } from "./harness.mjs";

const [siteDir, questionsFile, outFile, topK = "10"] = process.argv.slice(2);
const questions = JSON.parse(readFileSync(questionsFile, "utf8"));
const server = await serveStatic(siteDir);
const session = await launch();
try {
  await session.page.goto(server.url);
  await openBox(session.page);
  const results = await session.page.evaluate(
    async ({ questions, topK }) => {
      const out = [];
      for (const item of questions) {
        const { question, history = [] } = typeof item === "string" ? { question: item } : item;
        const found = await window.siteKnowledge.search(question, { topK, history });
        out.push({
          question,
          ids: found.results.map((r) => r.id),
          scores: found.results.map((r) => r.score),
          gate: found.gate,
          timings: found.timings,
        });
      }
      return out;
    },
    { questions, topK: Number(topK) },
  );
  writeFileSync(outFile, JSON.stringify({ results, offsite: session.offsite, errors: session.consoleErrors }));
  console.log(JSON.stringify({ questions: results.length }));
} finally {
  await session.close();
  await server.close();
}
