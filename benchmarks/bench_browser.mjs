// Usage: node benchmarks/bench_browser.mjs SITE_DIR QUESTIONS.json OFFTOPIC.json [--wllama]
// One site in Debian's chromium, offline: bytes per page view and on first open, warm
// embed + search latency, end-to-end refusal latency, and (with --wllama) the CPU model's
// speed. Prints one JSON object. Driven by benchmarks/bench_browser.py.
import { readFileSync } from "node:fs";
import { launch, openBox, serveStatic } from "../tests/browser/harness.mjs";

const [siteDir, questionsFile, offTopicFile, ...flags] = process.argv.slice(2);
const questions = JSON.parse(readFileSync(questionsFile, "utf8"));
const offTopic = JSON.parse(readFileSync(offTopicFile, "utf8"));

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(values) {
  const round = (x) => Math.round(x * 10) / 10;
  return { n: values.length, p50: round(percentile(values, 50)), p95: round(percentile(values, 95)) };
}

function kind(path) {
  if (/\/vendor\/(wllama|models)\//.test(path)) return "CPU model";
  if (/\/vendor\/web-llm\//.test(path)) return "GPU model runtime";
  if (/site-knowledge\.(.+\.)?(json|bin)$/.test(path)) return "artifact";
  if (/\/vendor\/encoder\//.test(path)) return "encoder";
  if (/\.(wasm|mjs)$/.test(path) || /\/vendor\/(ort|tokenizers)\//.test(path)) return "runtime";
  if (/\/site-knowledge\//.test(path)) return "box code";
  return "theme/page";
}

function bytesBy(records) {
  const out = {};
  for (const r of records) out[kind(r.path)] = (out[kind(r.path)] || 0) + r.bytes;
  return out;
}

const server = await serveStatic(siteDir);
const session = await launch();
const { page } = session;
try {
  // A gateway is configured (a closed port: it never answers), so opening loads no model.
  await page.addInitScript(() => {
    window.siteKnowledgeConfig = { gateways: ["http://127.0.0.1:9/"], engines: ["gateway", "search"] };
  });
  await page.goto(server.url, { waitUntil: "networkidle" });
  const pageView = server.served.slice();
  const launcherBytes = pageView.filter((r) => r.path.endsWith("/launcher.js")).reduce((a, r) => a + r.bytes, 0);
  const tagBytes = await page.evaluate(
    () => document.getElementById("site-knowledge-config").outerHTML.length + 80,
  );
  const t0 = Date.now();
  await openBox(page);
  const openMs = Date.now() - t0;
  const firstOpen = server.served.slice(pageView.length);

  // Warm: every question once to warm up, then timed.
  const search = (q) => page.evaluate((question) => window.siteKnowledge.search(question), q);
  for (const q of questions) await search(q);
  const embed = [];
  const rank = [];
  const both = [];
  for (let round = 0; round < 2; round++) {
    for (const q of questions) {
      const { timings } = await search(q);
      embed.push(timings.embedMs);
      rank.push(timings.searchMs);
      both.push(timings.embedMs + timings.searchMs);
    }
  }

  const refusalInBox = [];
  const refusalWall = [];
  const refusedEngines = [];
  for (const q of offTopic) {
    const started = Date.now();
    const answer = await page.evaluate((question) => window.siteKnowledge.ask(question), q);
    refusalWall.push(Date.now() - started);
    if (answer.refused) refusalInBox.push(answer.ms);
    refusedEngines.push(answer.engine);
  }

  let wllama = null;
  if (flags.includes("--wllama")) {
    const ctx = session.context;
    const p2 = await ctx.newPage();
    await p2.addInitScript(() => {
      window.siteKnowledgeConfig = { gateways: [], engines: ["wllama"] };
    });
    await p2.goto(server.url);
    const loadStart = Date.now();
    await openBox(p2);
    const answers = [];
    for (const q of questions.slice(0, 2)) {
      const started = Date.now();
      const a = await p2.evaluate((question) => window.siteKnowledge.ask(question), q);
      answers.push({ wallMs: Date.now() - started, engine: a.engine, timing: a.timing, chars: a.text.length });
    }
    const modelBytes = server.served
      .filter((r) => /\/vendor\/(wllama|models)\//.test(r.path))
      .reduce((a, r) => a + r.bytes, 0);
    wllama = { boxOpenToFirstAnswerMs: Date.now() - loadStart, answers, modelBytes };
  }

  console.log(
    JSON.stringify({
      site: siteDir,
      pageView: { launcherBytes, tagBytes, allBytes: bytesBy(pageView) },
      firstOpen: { bytes: bytesBy(firstOpen), openMs },
      warm: { embedMs: summary(embed), searchMs: summary(rank), embedPlusSearchMs: summary(both) },
      refusal: {
        inBoxMs: summary(refusalInBox),
        wallMs: summary(refusalWall),
        refused: refusalInBox.length,
        of: offTopic.length,
        engines: [...new Set(refusedEngines)],
      },
      wllama,
      offsite: session.offsite,
    }),
  );
} finally {
  await session.close();
  await server.close();
}
