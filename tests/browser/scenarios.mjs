// Usage: node tests/browser/scenarios.mjs SCENARIO SITE_DIR [ARG]
// Drives the chat box in Debian's chromium (offline; only loopback requests allowed) and prints
// one JSON line with what it observed; tests/test_browser_*.py asserts on it.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { openBox, override, withSite } from "./harness.mjs";
import { closedPort, startStubGateway } from "./stub_gateway.mjs";

const [scenario, siteDir, arg] = process.argv.slice(2);

function boxText(page) {
  return page.locator(".skn-box").innerText();
}

const scenarios = {
  /** What a page view costs before the box opens, and what opening it costs. */
  async page_cost() {
    const stub = await startStubGateway();
    return withSite(siteDir, async ({ server, session, page }) => {
      await override(page, { gateways: [stub.base + "ok/"] });
      await page.goto(server.url, { waitUntil: "networkidle" });
      const before = server.served.slice();
      const t0 = Date.now();
      await openBox(page);
      const openMs = Date.now() - t0;
      const onOpen = server.served.slice(before.length);
      const launcher = await page.locator(".skn-launch").count();
      await page.waitForTimeout(1000);
      const later = server.served.slice(before.length);
      return { before, onOpen, later, openMs, launcher, offsite: session.offsite, errors: session.consoleErrors };
    }).finally(() => stub.close());
  },

  /** The box's fixed strings on a page in another language (<html lang>), and its refusal. */
  async page_language() {
    return withSite(siteDir, async ({ session, server, page }) => {
      await override(page, { gateways: [] });
      await page.goto(server.url);
      const launcher = page.locator(".skn-launch");
      await page.waitForFunction(() => document.querySelector(".skn-launch")?.textContent !== "Ask this site",
        null, { timeout: 10000 }).catch(() => {});
      const button = await launcher.textContent();
      await openBox(page);
      const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), arg);
      return {
        lang: await page.evaluate(() => document.documentElement.lang),
        button,
        title: await page.locator("#skn-title").textContent(),
        submit: await page.locator(".skn-box form button[type=submit]").textContent(),
        answer,
        offsite: session.offsite,
      };
    });
  },

  /** An off-topic question: refused by the gate, no engine called, no request made. */
  async offtopic() {
    const stub = await startStubGateway();
    try {
      return await withSite(siteDir, async ({ server, session, page }) => {
        await override(page, { gateways: [stub.base + "ok/"] });
        await page.goto(server.url);
        await openBox(page);
        await page.waitForTimeout(500);
        const mark = session.requests.length;
        const stubMark = stub.requests.length;
        const question = arg || "What is the best recipe for banana bread with walnuts?";
        const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
        const again = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
        const stats = await page.evaluate(() => window.siteKnowledge.stats);
        return {
          answer,
          againMs: again.ms,
          requestsDuring: session.requests.slice(mark).map((r) => r.url),
          gatewayRequests: stub.requests.length - stubMark,
          engineCalls: stats.engineCalls,
          offsite: session.offsite,
          text: await boxText(page),
        };
      });
    } finally {
      await stub.close();
    }
  },

  /** Gateway stopped, no WebGPU: an injection refused before any engine, then an answer from
   * wllama on the CPU, grounded in the page before it is shown as final.
   * ARG: JSON {injection, question}. */
  async wllama() {
    const down = await closedPort();
    const { injection, question } = JSON.parse(arg);
    return withSite(siteDir, async ({ server, session, page }) => {
      // A short answer keeps the test quick; the model, prompt and stream are the real ones.
      await override(page, { gateways: [down], answer_tokens: 64 });
      await page.goto(server.url);
      await openBox(page);
      const stats = () => page.evaluate(() => window.siteKnowledge.stats);
      const refused = await page.evaluate((q) => window.siteKnowledge.ask(q), injection);
      const callsAfterInjection = { ...(await stats()).engineCalls };
      const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
      const after = await stats();
      const note = page.locator(".skn-exchange:last-child .skn-grounding");
      return {
        refused,
        callsAfterInjection,
        answer,
        check: after.lastCheck,
        asked: after.lastPrompt.at(-1).content,
        engineCalls: after.engineCalls,
        note: (await note.count()) ? { text: await note.innerText(), role: await note.getAttribute("role") } : null,
        shown: await page.locator(".skn-exchange:last-child .skn-text").innerText(),
        text: await boxText(page),
        offsite: session.offsite,
      };
    });
  },
};

/** Gateway contract through a stub: streaming, queue position, 429, interruption, fallback. */
scenarios.gateway_stub = async function gatewayStub() {
  const stub = await startStubGateway();
  const question = arg || "What is this site about?";
  const out = {};
  try {
    for (const mode of ["ok", "queued", "busy", "cut", "late", "revised"]) {
      out[mode] = await withSite(siteDir, async ({ server, session, page }) => {
        // "late" falls back; search only keeps it quick (tests/test_browser_box.py runs wllama).
        const engines = mode === "late" ? ["gateway", "webllm", "search"] : undefined;
        await override(page, { gateways: [stub.base + mode + "/"], ...(engines ? { engines } : {}) });
        await page.goto(server.url);
        await openBox(page);
        await page.evaluate(() => {
          window.__queueSeen = [];
          window.__textSteps = [];
          const log = document.querySelector(".skn-log");
          new MutationObserver(() => {
            for (const n of document.querySelectorAll(".skn-queue")) {
              if (!n.hidden && n.textContent && !window.__queueSeen.includes(n.textContent)) {
                window.__queueSeen.push(n.textContent);
              }
            }
            const t = document.querySelector(".skn-exchange:last-child .skn-text");
            if (t && t.textContent && window.__textSteps.at(-1) !== t.textContent) {
              window.__textSteps.push(t.textContent);
            }
          }).observe(log, { subtree: true, childList: true, characterData: true, attributes: true });
        });
        const mark = stub.requests.length;
        const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
        const stats = await page.evaluate(() => window.siteKnowledge.stats);
        const seen = await page.evaluate(() => ({ queue: window.__queueSeen, steps: window.__textSteps }));
        const note = page.locator(".skn-exchange:last-child .skn-grounding");
        return {
          answer,
          engineCalls: stats.engineCalls,
          queueSeen: seen.queue,
          textSteps: seen.steps.length,
          streamed: seen.steps.at(-2) || null,
          shown: await page.locator(".skn-exchange:last-child .skn-text").innerText(),
          note: (await note.count()) ? { text: await note.innerText(), role: await note.getAttribute("role") } : null,
          gatewayRequests: stub.requests.length - mark,
          text: await boxText(page),
          offsite: session.offsite,
        };
      });
    }
    return out;
  } finally {
    await stub.close();
  }
};

/** Follow-ups use memory, forget clears it, instant navigation keeps one box and the talk. */
scenarios.memory = async function memory() {
  const stub = await startStubGateway();
  const [first, second] = JSON.parse(arg);
  try {
    return await withSite(siteDir, async ({ server, session, page }) => {
      await override(page, { gateways: [stub.base + "ok/"] });
      await page.goto(server.url);
      await openBox(page);
      const a1 = await page.evaluate((q) => window.siteKnowledge.ask(q), first);
      const a2 = await page.evaluate((q) => window.siteKnowledge.ask(q), second);
      const historyAfterTwo = await page.evaluate(() => window.siteKnowledge.history);
      const sentHistory = stub.requests.at(-1).body.history;
      const followupQuery = await page.evaluate(() => window.siteKnowledge.stats.then((s) => s.lastQuery));
      // Material instant navigation: follow an internal link without a full load.
      const navigations = [];
      page.on("framenavigated", (frame) => frame === page.mainFrame() && navigations.push(frame.url()));
      const href = await page.evaluate(() => {
        const here = location.href;
        const link = [...document.querySelectorAll("a.md-nav__link[href], .md-content a[href]")].find(
          (a) => a.href.startsWith(location.origin) && a.href.split("#")[0] !== here.split("#")[0],
        );
        return link ? link.getAttribute("href") : null;
      });
      const hasInstant = href !== null;
      let afterNav = null;
      if (hasInstant) {
        await page.evaluate(() => (window.__sameDocument = true));
        // A DOM click, as a visitor's: Material's instant navigation intercepts it.
        await page.locator(`a[href="${href}"]`).first().evaluate((a) => a.click());
        await page.waitForURL((u) => u.href !== server.url, { timeout: 15000 });
        await page.waitForTimeout(1000);
        await page.evaluate(() => window.siteKnowledge.open());
        afterNav = {
          href,
          url: page.url(),
          sameDocument: await page.evaluate(() => window.__sameDocument === true),
          boxes: await page.locator("#site-knowledge").count(),
          launchers: await page.locator(".skn-launch").count(),
          exchanges: await page.locator(".skn-exchange").count(),
          history: await page.evaluate(() => window.siteKnowledge.history),
          visible: await page.locator(".skn-box").isVisible(),
        };
        const before = stub.requests.length;
        const a3 = await page.evaluate((q) => window.siteKnowledge.ask(q), first);
        afterNav.sentHistory = stub.requests.length > before ? stub.requests.at(-1).body.history : null;
        afterNav.siteRoot = server.url;
        afterNav.citationHref = a3.citations[0] && a3.citations[0].url;
      }
      await page.evaluate(() => window.siteKnowledge.ask("forget"));
      const historyAfterForget = await page.evaluate(() => window.siteKnowledge.history);
      const mark = stub.requests.length;
      await page.evaluate((q) => window.siteKnowledge.ask(q), first);
      const sentAfterForget = stub.requests.length > mark ? stub.requests.at(-1).body.history : null;
      return {
        a1, a2, historyAfterTwo, sentHistory, followupQuery, afterNav, historyAfterForget,
        sentAfterForget, offsite: session.offsite, errors: session.consoleErrors,
      };
    });
  } finally {
    await stub.close();
  }
};

/** An earlier answer that obeys an injection stays in the tab's memory but never reaches an
 * engine again: the next question is answered without it. ARG: JSON [first, second]. */
scenarios.injected_history = async function injectedHistory() {
  const stub = await startStubGateway();
  const [first, second] = JSON.parse(arg);
  try {
    return await withSite(siteDir, async ({ server, session, page }) => {
      await override(page, { gateways: [stub.base + "obeys/"] });
      await page.goto(server.url);
      await openBox(page);
      const a1 = await page.evaluate((q) => window.siteKnowledge.ask(q), first);
      const a2 = await page.evaluate((q) => window.siteKnowledge.ask(q), second);
      return {
        a1,
        a2,
        remembered: await page.evaluate(() => window.siteKnowledge.history),
        sentHistory: stub.requests.at(-1).body.history,
        gatewayRequests: stub.requests.length,
        offsite: session.offsite,
      };
    });
  } finally {
    await stub.close();
  }
};

/** Screenshots of the open box with an answer, light and dark. ARG: output folder. */
scenarios.screenshots = async function screenshots() {
  const outDir = arg;
  const shots = {};
  for (const scheme of ["light", "dark"]) {
    shots[scheme] = await withSite(siteDir,
      async ({ server, session, page }) => {
        await override(page, { engines: ["search"] });
        await page.goto(server.url);
        await openBox(page);
        const question = process.env.SK_SHOT_QUESTION || "What is this site about?";
        await page.evaluate((q) => window.siteKnowledge.ask(q), question);
        await page.waitForTimeout(1700);
        const path = `${outDir}/chat-box-${scheme}.png`;
        mkdirSync(dirname(path), { recursive: true });
        await page.screenshot({ path });
        const dark = await page.locator("#site-knowledge").evaluate((n) => n.classList.contains("skn-dark"));
        const background = await page.locator(".skn-box").evaluate((n) => getComputedStyle(n).backgroundColor);
        return { path, dark, background, offsite: session.offsite };
      },
      { colorScheme: scheme, viewport: { width: 1100, height: 760 } },
    );
  }
  return shots;
};

/** No gateway and no model: the box's answers from search alone. ARG: JSON list of questions. */
scenarios.search_only = async function searchOnly() {
  return withSite(siteDir, async ({ server, session, page }) => {
    await override(page, { engines: ["search"], gateways: [] });
    await page.goto(server.url);
    await openBox(page);
    const answers = [];
    for (const question of JSON.parse(arg)) {
      answers.push(await page.evaluate((q) => window.siteKnowledge.ask(q), question));
    }
    return { answers, text: await boxText(page), offsite: session.offsite };
  });
};

/** Keyboard: the shortcut opens the box with focus in the input; Escape closes it. */
scenarios.keyboard = async function keyboard() {
  return withSite(siteDir, async ({ server, page }) => {
    await page.goto(server.url);
    await page.keyboard.press("Control+k");
    await page.locator(".skn-box").waitFor({ state: "visible" });
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
    const live = await page.locator(".skn-log").getAttribute("aria-live");
    const role = await page.locator(".skn-box").getAttribute("role");
    const label = await page.locator("label[for=skn-input]").innerText();
    await page.keyboard.press("Escape");
    const hiddenAfterEscape = await page.locator(".skn-box").isHidden();
    return { focused, live, role, label, hiddenAfterEscape };
  });
};

/** The real gateway and llama-server: a streamed cited answer, answers the gateway grounded
 * (what streamed, the done event on the wire, what the box shows), a queue position, a 429.
 * ARG: JSON {gateway, question, long, grounded: [questions]}. The gateway admits one generation
 * and one waiter. */
scenarios.real_gateway = async function realGateway() {
  const { gateway, question, long, grounded: toGround } = JSON.parse(arg);
  return withSite(siteDir, async ({ server, session, page }) => {
    const watch = async (p) => {
      await override(p, { gateways: [gateway] });
      await p.addInitScript(() => {
        // Keep a copy of each /api/ask event stream as it came over the wire.
        window.__wire = [];
        const fetchOriginal = window.fetch;
        window.fetch = async (...args) => {
          const response = await fetchOriginal(...args);
          if (String(args[0]).endsWith("/api/ask") && response.ok) {
            const entry = { body: null };
            window.__wire.push(entry);
            response.clone().text().then((body) => (entry.body = body));
          }
          return response;
        };
      });
      await p.goto(server.url);
      await openBox(p);
      await p.evaluate(() => {
        window.__queueSeen = [];
        window.__textSteps = 0;
        new MutationObserver(() => {
          for (const n of document.querySelectorAll(".skn-queue")) {
            if (!n.hidden && n.textContent && !window.__queueSeen.includes(n.textContent)) {
              window.__queueSeen.push(n.textContent);
            }
          }
          window.__textSteps += 1;
        }).observe(document.querySelector(".skn-log"), { subtree: true, childList: true, characterData: true });
      });
    };
    await watch(page);
    const first = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
    const steps = await page.evaluate(() => window.__textSteps);
    const firstText = await boxText(page);

    const grounded = [];
    for (const q of toGround) {
      await page.evaluate(() => window.siteKnowledge.forget());
      const answer = await page.evaluate((text) => window.siteKnowledge.ask(text), q);
      await page.waitForFunction(() => window.__wire.at(-1).body !== null);
      const last = page.locator(".skn-exchange:last-child");
      const note = last.locator(".skn-grounding");
      grounded.push({
        question: q,
        answer,
        wire: await page.evaluate(() => window.__wire.at(-1).body),
        shown: await last.locator(".skn-text").innerText(),
        note: (await note.count()) ? await note.innerText() : null,
      });
    }

    const pageB = await session.context.newPage();
    const pageC = await session.context.newPage();
    await watch(pageB);
    await watch(pageC);
    await page.evaluate(() => window.siteKnowledge.forget());
    const active = page.evaluate((q) => window.siteKnowledge.ask(q), long);
    await page.waitForFunction(
      () => (document.querySelector(".skn-exchange:last-child .skn-text")?.textContent || "").length > 0,
      null,
      { timeout: 120000 },
    );
    const waiting = pageB.evaluate((q) => window.siteKnowledge.ask(q), question);
    await pageB.waitForFunction(() => window.__queueSeen.length > 0, null, { timeout: 30000 });
    const refused = await pageC.evaluate((q) => window.siteKnowledge.ask(q), question);
    const refusedCalls = await pageC.evaluate(() => window.siteKnowledge.stats.then((s) => s.engineCalls));
    const [activeAnswer, waitingAnswer] = await Promise.all([active, waiting]);
    return {
      first,
      steps,
      firstText,
      grounded,
      activeAnswer,
      waitingAnswer,
      queueSeen: await pageB.evaluate(() => window.__queueSeen),
      refused,
      refusedCalls,
      refusedText: await boxText(pageC),
      offsite: session.offsite,
    };
  });
};

/** WebGPU detection and model choice with a stand-in navigator.gpu (headless has no adapter).
 * WebLLM itself is not loaded here: a stand-in adapter cannot run it. */
scenarios.webgpu = async function webgpu() {
  const webllm = (url) => ({
    model: "SmolLM2-360M-Instruct-q4f16_1-MLC",
    model_f32: "SmolLM2-360M-Instruct-q4f32_1-MLC",
    url,
    n_ctx: 2048,
  });
  const cases = {
    none: { adapter: null, webllm: webllm(null) },
    f16_unhosted: { adapter: ["shader-f16"], webllm: webllm(null) },
    f32_unhosted: { adapter: [], webllm: webllm(null) },
  };
  const out = {};
  for (const [name, c] of Object.entries(cases)) {
    out[name] = await withSite(siteDir, async ({ server, session, page }) => {
      await page.addInitScript((features) => {
        const gpu = { requestAdapter: async () => (features ? { features: new Set(features) } : null) };
        Object.defineProperty(Navigator.prototype, "gpu", { get: () => gpu, configurable: true });
      }, c.adapter);
      await override(page, { engines: ["webllm", "search"], gateways: [], webllm: c.webllm });
      await page.goto(server.url);
      await openBox(page);
      const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), arg || "What is this site about?");
      return { answer, text: await boxText(page), missing: server.missing, offsite: session.offsite };
    });
  }
  return out;
};

const result = await scenarios[scenario]();
console.log(JSON.stringify(result));
