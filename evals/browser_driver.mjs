// The battery's browser engine: a built site served on 127.0.0.1, Debian's chromium through
// playwright-core (the browser tests' harness), and window.siteKnowledge.ask() per question.
//
// usage: node evals/browser_driver.mjs SITE_DIR [ENGINES]   (ENGINES: comma list, default wllama)
// stdin: one JSON request a line, {"question", "history": [{"question", "answer"}]}
// stdout: {"ready": true, ...} once, then one JSON reply a line.
//
// The box keeps its own conversation memory, so a follow-up is asked after its earlier
// questions have been asked for real (their answers are the model's own, not the battery's).
import { createInterface } from "node:readline";
import { launch, openBox, serveStatic } from "../tests/browser/harness.mjs";

const [siteDir, enginesArg] = process.argv.slice(2);
const engines = (enginesArg || "wllama").split(",");
const out = (obj) => process.stdout.write(JSON.stringify(obj) + "\n");

const server = await serveStatic(siteDir);
const session = await launch();
const { page } = session;
await page.addInitScript((list) => {
  window.siteKnowledgeConfig = { engines: list };
}, engines);
await page.goto(server.url);
await openBox(page);
out({ ready: true, url: server.url, engines, userAgent: await page.evaluate(() => navigator.userAgent) });

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  const started = Date.now();
  try {
    const reply = await page.evaluate(async ({ question, history }) => {
      const sk = window.siteKnowledge;
      await sk.forget();
      for (const turn of history) await sk.ask(turn.question);
      return await sk.ask(question);
    }, request);
    out({ ...reply, ms: reply.ms ?? Date.now() - started });
  } catch (error) {
    out({ error: String(error), ms: Date.now() - started });
  }
}
await session.close();
await server.close();
