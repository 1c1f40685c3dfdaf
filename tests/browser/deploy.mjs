// Usage: node tests/browser/deploy.mjs SCENARIO ARG_JSON
// The deployed example as a visitor's browser sees it: a page from the site's origin, asking
// the gateway's origin. Every request the page makes is recorded (also those the harness
// blocks); tests/test_deploy_*.py asserts on the JSON line printed last.
import { launch, openBox, serveStatic } from "./harness.mjs";

const [scenario, arg] = process.argv.slice(2);
const options = JSON.parse(arg);

/** Count text changes in the answer log, to tell a streamed answer from one block. */
async function watchSteps(page) {
  await page.evaluate(() => {
    window.__textSteps = 0;
    new MutationObserver(() => (window.__textSteps += 1)).observe(
      document.querySelector(".skn-log"),
      { subtree: true, childList: true, characterData: true },
    );
  });
}

const scenarios = {
  /** ARG: {site, question}. The site (served through nginx over TLS) asks its configured
   * gateway (nginx over TLS, then the gateway and llama-server). */
  async ask({ site, question }) {
    const session = await launch({ ignoreHTTPSErrors: true });
    try {
      const { page } = session;
      await page.goto(site);
      try {
        await page.waitForFunction(() => window.siteKnowledge, null, { timeout: 30000 });
      } catch {
        return { failure: "no chat box on the page", errors: session.consoleErrors,
                 requests: session.requests.map((r) => r.url) };
      }
      await openBox(page);
      await watchSteps(page);
      const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
      return {
        answer,
        steps: await page.evaluate(() => window.__textSteps),
        text: await page.locator(".skn-box").innerText(),
        requests: session.requests.map((r) => r.url),
        errors: session.consoleErrors,
      };
    } finally {
      await session.close();
    }
  },

  /** ARG: {siteDir, pages}. Page views of the built site (a full load, then Material's instant
   * navigation to each other page), the box opened and a search run: everything a visitor's
   * browser requests, including what the harness blocks. */
  async page_views({ siteDir, pages }) {
    const server = await serveStatic(siteDir);
    const site = server.url;
    const session = await launch();
    try {
      const { page } = session;
      await page.goto(new URL(pages[0], site).href);
      await page.waitForLoadState("networkidle");
      for (const path of pages.slice(1)) {
        const href = new URL(path, site).href;
        await page.evaluate((h) => {
          const a = document.createElement("a");
          a.href = h;
          document.body.append(a);
          a.click();
        }, href);
        await page.waitForURL(href, { timeout: 15000 });
        await page.waitForLoadState("networkidle");
      }
      await openBox(page);
      const found = await page.evaluate(() => window.siteKnowledge.search("Where does Teo work?"));
      await page.waitForTimeout(500);
      return {
        site,
        results: found.results.length,
        requests: session.requests.map((r) => r.url),
        missing: server.missing,
      };
    } finally {
      await session.close();
      await server.close();
    }
  },

  /** ARG: {siteDir, question}. A deployed copy whose configured gateway cannot be reached
   * (headless Chromium has no WebGPU adapter): the box answers with wllama on the CPU. */
  async local_engine({ siteDir, question }) {
    const server = await serveStatic(siteDir);
    const session = await launch();
    try {
      const { page } = session;
      // A short answer keeps the test quick; the files, model and engine are the site's own.
      await page.addInitScript(() => {
        window.siteKnowledgeConfig = { answer_tokens: 48 };
      });
      await page.goto(server.url);
      await openBox(page);
      const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
      return {
        answer,
        text: await page.locator(".skn-box").innerText(),
        served: server.served.map((r) => r.path),
        missing: server.missing,
        offsite: session.offsite,
      };
    } finally {
      await session.close();
      await server.close();
    }
  },
};

console.log(JSON.stringify(await scenarios[scenario](options)));
