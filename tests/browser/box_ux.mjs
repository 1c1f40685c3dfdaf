// Usage: node tests/browser/box_ux.mjs SCENARIO SITE_DIR [ARG]
// The chat box as a visitor uses it (issue 36): typing, sources while the answer streams, copy
// and votes, phones, accessibility. Debian's chromium, loopback only; prints one JSON line that
// tests/test_browser_box_ux.py asserts on.
import { launch, openBox, serveStatic } from "./harness.mjs";

const [scenario, siteDir, arg] = process.argv.slice(2);

async function withSite(fn, options = {}) {
  const server = await serveStatic(siteDir);
  const session = await launch(options);
  try {
    return await fn({ server, session, page: session.page });
  } finally {
    await session.close();
    await server.close();
  }
}

async function override(page, config) {
  await page.addInitScript((c) => {
    window.siteKnowledgeConfig = c;
  }, config);
}

const scenarios = {
  /** Opening the box with Ctrl+K and typing into it, at the top of a long page and half-way
   * down: the page behind never scrolls. */
  async typing() {
    return withSite(async ({ server, session, page }) => {
      await override(page, { engines: ["search"] });
      await page.goto(server.url);
      await page.waitForFunction(() => window.siteKnowledge);
      const pageHeight = await page.evaluate(() => document.documentElement.scrollHeight - innerHeight);
      const run = async (startAt) => {
        await page.evaluate((y) => window.scrollTo(0, y), startAt);
        await page.waitForTimeout(200);
        const before = await page.evaluate(() => scrollY);
        await page.keyboard.press("Control+k");
        await page.locator(".skn-box").waitFor({ state: "visible" });
        const afterOpen = await page.evaluate(() => scrollY);
        const ys = [];
        for (const key of "Where did he work?") {
          await page.keyboard.type(key);
          ys.push(await page.evaluate(() => scrollY));
        }
        const typed = await page.locator("#skn-input").inputValue();
        await page.keyboard.press("Escape");
        await page.keyboard.press("Control+a");
        return { before, afterOpen, ys, typed };
      };
      const top = await run(0);
      await page.evaluate(() => (document.querySelector("#skn-input").value = ""));
      const middle = await run(Math.floor(pageHeight / 2));
      return { pageHeight, top, middle, offsite: session.offsite };
    });
  },
};

const result = await scenarios[scenario]();
console.log(JSON.stringify(result));
