// Usage: node tests/browser/box_ux.mjs SCENARIO SITE_DIR [ARG]
// The chat box as a visitor uses it (issue 36): typing, sources while the answer streams, copy
// and votes, phones, accessibility. Debian's chromium, loopback only; prints one JSON line that
// tests/test_browser_box_ux.py asserts on.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { launch, openBox, override, withSite } from "./harness.mjs";
import { closedPort } from "./stub_gateway.mjs";

const [scenario, siteDir, arg] = process.argv.slice(2);

const scenarios = {
  /** Opening the box with Ctrl+K and typing into it, at the top of a long page and half-way
   * down: the page behind never scrolls. */
  async typing() {
    return withSite(siteDir, async ({ server, session, page }) => {
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

/** Record, as the page changes, when the last exchange first lists sources and when its answer
 * text first appears. */
async function watchTimeline(page) {
  await page.evaluate(() => {
    window.__timeline = { sourcesAt: null, sources: [], deltaAt: null, sourcesAtDelta: 0 };
    const t = window.__timeline;
    new MutationObserver(() => {
      const last = document.querySelector(".skn-exchange:last-child");
      if (!last) return;
      const items = [...last.querySelectorAll(".skn-cites:not([hidden]) li")];
      if (t.sourcesAt === null && items.length) {
        t.sourcesAt = performance.now();
        t.sources = items.map((li) => li.innerText);
        t.label = last.querySelector(".skn-cites").getAttribute("aria-label");
      }
      const text = last.querySelector(".skn-text").textContent;
      if (t.deltaAt === null && text) {
        t.deltaAt = performance.now();
        t.sourcesAtDelta = items.length;
      }
    }).observe(document.querySelector(".skn-log"), { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

async function finishedList(page) {
  return page.locator(".skn-exchange:last-child .skn-cites li").evaluateAll((lis) =>
    lis.map((li) => ({ text: li.querySelector("a").innerText, cited: li.classList.contains("skn-cited"), href: li.querySelector("a").href })),
  );
}

/** Sources listed before the answer streams: through the real gateway (ARG: JSON {gateway,
 * question}), or on the device path (gateway down, wllama on the CPU; ARG: JSON {question}). */
scenarios.sources_first = async function sourcesFirst() {
  const { gateway, question } = JSON.parse(arg);
  const gateways = gateway ? [gateway] : [await closedPort()];
  const engines = gateway ? ["gateway"] : ["gateway", "wllama"];
  return withSite(siteDir, async ({ server, session, page }) => {
    await override(page, { gateways, engines, answer_tokens: 48 });
    await page.goto(server.url);
    await openBox(page);
    await watchTimeline(page);
    const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
    return {
      answer,
      timeline: await page.evaluate(() => window.__timeline),
      finished: await finishedList(page),
      label: await page.locator(".skn-exchange:last-child .skn-cites").getAttribute("aria-label"),
      offsite: session.offsite,
      errors: session.consoleErrors,
    };
  });
};

/** Copy and vote on a gateway's answer. ARG: JSON {gateway, question}. */
scenarios.copy_vote = async function copyVote() {
  const { gateway, question } = JSON.parse(arg);
  return withSite(siteDir, async ({ server, session, page }) => {
    await session.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
    await override(page, { gateways: [gateway], engines: ["gateway"] });
    await page.goto(server.url);
    await openBox(page);
    const answer = await page.evaluate((q) => window.siteKnowledge.ask(q), question);
    const last = page.locator(".skn-exchange:last-child");
    await last.locator(".skn-copy").click();
    await last.locator(".skn-said", { hasText: "Copied." }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    const feedback = [];
    page.on("request", (r) => r.url().endsWith("/api/feedback") && feedback.push(r.postData()));
    await last.getByRole("button", { name: "Bad answer" }).click();
    await last.locator(".skn-said", { hasText: "Thanks for the feedback." }).waitFor();
    const pressed = await last.locator(".skn-vote").evaluateAll((bs) =>
      bs.map((b) => [b.textContent, b.getAttribute("aria-pressed")]),
    );
    return { answer, copied, feedback, pressed, offsite: session.offsite, errors: session.consoleErrors };
  });
};

/** A phone (390×844, touch): the box opens full screen with its input in view, closes with
 * its button and with Escape, and the page works again afterwards. */
const PHONE = {
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 3,
    userAgent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36",
};

scenarios.phone = async function phone() {
  const device = PHONE;
  return withSite(siteDir,
    async ({ server, session, page }) => {
      await override(page, { engines: ["search"] });
      await page.goto(server.url);
      await page.waitForFunction(() => window.siteKnowledge);
      const viewport = page.viewportSize();
      const inView = (box) =>
        box && box.x >= 0 && box.y >= 0 && box.x + box.width <= viewport.width + 0.5 && box.y + box.height <= viewport.height + 0.5;
      const overflowBefore = await page.evaluate(() => getComputedStyle(document.documentElement).overflow);
      const launcher = page.locator(".skn-launch");
      await launcher.tap();
      await page.locator(".skn-box").waitFor({ state: "visible" });
      const opened = {
        box: await page.locator(".skn-box").boundingBox(),
        inputInView: inView(await page.locator("#skn-input").boundingBox()),
        closeInView: inView(await page.locator(".skn-close").boundingBox()),
        closeSize: await page.locator(".skn-close").boundingBox(),
        focused: await page.evaluate(() => document.activeElement.id),
        locked: await page.evaluate(() => getComputedStyle(document.documentElement).overflow),
      };
      await page.locator("#skn-input").fill("What projects has Teo built?");
      await page.keyboard.press("Enter");
      await page.locator(".skn-exchange .skn-by", { hasText: "Answered by" }).waitFor();
      opened.inputInViewAfterAnswer = inView(await page.locator("#skn-input").boundingBox());
      await page.locator(".skn-close").tap();
      const afterButton = await page.locator(".skn-box").isHidden();
      await launcher.tap();
      await page.locator(".skn-box").waitFor({ state: "visible" });
      await page.keyboard.press("Escape");
      const afterEscape = await page.locator(".skn-box").isHidden();
      // The page works again: it scrolls, nothing of the box covers it, its links take taps.
      const after = await page.evaluate(() => {
        const centre = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
        return {
          overflow: getComputedStyle(document.documentElement).overflow,
          covered: Boolean(centre && centre.closest("#site-knowledge")),
          focused: document.activeElement === document.querySelector(".skn-launch"),
        };
      });
      await page.mouse.wheel(0, 400);
      await page.waitForTimeout(300);
      after.scrolled = await page.evaluate(() => scrollY);
      // Material's menu button opens its navigation drawer, whose first page link navigates.
      await page.locator("label.md-header__button[for='__drawer']").tap();
      after.drawerOpen = await page.evaluate(() => document.getElementById("__drawer").checked);
      await page.waitForTimeout(500); // the drawer slides in
      const links = page.locator(".md-nav--primary a.md-nav__link[href]:visible");
      const hrefs = await links.evaluateAll((as) => as.map((a) => a.href));
      const index = hrefs.findIndex((h) => h.split("#")[0] !== server.url);
      await links.nth(index).tap();
      await page.waitForURL((u) => u.href !== server.url, { timeout: 15000 });
      after.navigatedTo = new URL(page.url()).pathname;
      return { viewport, overflowBefore, opened, afterButton, afterEscape, after, offsite: session.offsite };
    },
    { viewport: { width: 390, height: 844 }, device },
  );
};

const AXE = new URL("../../node_modules/axe-core/axe.min.js", import.meta.url).pathname;

/** Keyboard only, from Ctrl+K to a cited link, with an axe-core audit of the page with the box
 * open and answered (axe from node_modules, injected locally). ARG: JSON {gateway, question}. */
scenarios.a11y = async function a11y() {
  const { gateway, question } = JSON.parse(arg);
  return withSite(siteDir, async ({ server, session, page }) => {
    await override(page, { gateways: [gateway], engines: ["gateway"] });
    await page.goto(server.url);
    await page.waitForFunction(() => window.siteKnowledge);
    const active = () =>
      page.evaluate(() => {
        const a = document.activeElement;
        return {
          inBox: Boolean(a && a.closest("#site-knowledge")),
          launcher: a === document.querySelector(".skn-launch"),
          id: a && a.id,
          cited: Boolean(a && a.matches(".skn-cited a")),
          href: a && a.href,
        };
      });
    // Open from the launcher with the keyboard; Escape gives focus back to it.
    await page.locator(".skn-launch").focus();
    await page.keyboard.press("Enter");
    await page.locator(".skn-box").waitFor({ state: "visible" });
    const openedFocus = await active();
    await page.keyboard.press("Escape");
    const closedFocus = await active();
    const hiddenAfterEscape = await page.locator(".skn-box").isHidden();

    await page.keyboard.press("Control+k");
    await page.locator(".skn-box").waitFor({ state: "visible" });
    await page.keyboard.type("first line");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("second line");
    const multiline = await page.locator("#skn-input").inputValue();
    const exchangesBeforeSubmit = await page.locator(".skn-exchange").count();
    await page.keyboard.press("Control+a");
    await page.keyboard.press("Backspace");
    await page.keyboard.type(question);
    await page.keyboard.press("Enter");
    await page.locator(".skn-exchange:last-child .skn-tools:not([hidden])").waitFor({ timeout: 120000 });
    const liveRegion = await page.locator(".skn-exchange:last-child .skn-text").evaluate((n) => {
      const region = n.closest("[aria-live]");
      return region && { live: region.getAttribute("aria-live"), role: region.getAttribute("role") };
    });

    await page.addScriptTag({ path: AXE });
    const audit = (context) =>
      page.evaluate(async (c) => {
        const found = await window.axe.run(c || document, { resultTypes: ["violations"] });
        return found.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          targets: v.nodes.map((n) => n.target.join(" ")),
        }));
      }, context);
    const pageAudit = await audit(null);
    const boxAudit = await audit({ include: [["#site-knowledge"], [".skn-launch"]] });

    // Focus stays in the open box, forwards and backwards.
    const trapped = [];
    for (const key of ["Tab", "Shift+Tab"]) {
      await page.locator("#skn-input").focus();
      for (let i = 0; i < 25; i++) {
        await page.keyboard.press(key);
        trapped.push((await active()).inBox);
      }
    }

    // From the input, backwards to the first cited link, and follow it.
    await page.locator("#skn-input").focus();
    let reached = null;
    for (let i = 0; i < 30 && !reached; i++) {
      await page.keyboard.press("Shift+Tab");
      const a = await active();
      if (a.cited) reached = { presses: i + 1, href: a.href };
    }
    let followed = null;
    if (reached) {
      await page.keyboard.press("Enter");
      await page.waitForURL((u) => u.href !== server.url, { timeout: 15000 });
      followed = page.url();
    }
    const labels = await page.evaluate(() =>
      [...document.querySelectorAll("#site-knowledge button, #site-knowledge textarea")].map((n) => ({
        tag: n.tagName,
        name: n.getAttribute("aria-label") || (n.labels && n.labels[0] && n.labels[0].textContent) || n.textContent,
      })),
    );
    return {
      openedFocus, closedFocus, hiddenAfterEscape, multiline, exchangesBeforeSubmit, liveRegion, pageAudit, boxAudit,
      trapped, reached, followed, labels, offsite: session.offsite,
    };
  });
};

/** Screenshot of the box answering on a phone (search only). ARG: JSON {question, path}. */
scenarios.phone_shot = async function phoneShot() {
  const { question, path } = JSON.parse(arg);
  return withSite(siteDir,
    async ({ server, session, page }) => {
      await override(page, { engines: ["search"] });
      await page.goto(server.url);
      await page.waitForFunction(() => window.siteKnowledge);
      await page.locator(".skn-launch").tap();
      await page.locator(".skn-box").waitFor({ state: "visible" });
      await page.locator("#skn-input").fill(question);
      await page.keyboard.press("Enter");
      await page.locator(".skn-exchange:last-child .skn-tools:not([hidden])").waitFor({ timeout: 180000 });
      await page.locator("#skn-input").blur();
      await page.waitForTimeout(1700); // the loading bars go
      mkdirSync(dirname(path), { recursive: true });
      await page.screenshot({ path });
      const answer = await page.locator(".skn-exchange:last-child .skn-text").innerText();
      return { path, answer, offsite: session.offsite };
    },
    { viewport: { width: 390, height: 844 }, device: PHONE },
  );
};

/** Screenshot of a command's text output, as a terminal shows it. ARG: JSON {text, title, path}. */
scenarios.text_shot = async function textShot() {
  const { text, title, path } = JSON.parse(arg);
  const session = await launch({ viewport: { width: 1400, height: 300 } });
  try {
    const page = session.page;
    await page.setContent(
      `<!doctype html><title>${title}</title><body style="margin:0;background:#1e2129">` +
        `<pre style="margin:0;padding:18px 22px;color:#e6e8ee;font:14px/1.45 'DejaVu Sans Mono',monospace"></pre></body>`,
    );
    await page.locator("pre").evaluate((n, t) => (n.textContent = t), text);
    mkdirSync(dirname(path), { recursive: true });
    await page.locator("pre").screenshot({ path });
    return { path, offsite: session.offsite };
  } finally {
    await session.close();
  }
};

const result = await scenarios[scenario]();
console.log(JSON.stringify(result));
