// Shared by the browser tests and the benchmark: Debian's chromium through playwright-core,
// a fresh profile, and every request that is not to a loopback address blocked and recorded.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.SK_CHROMIUM || "/usr/bin/chromium";
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
];

export function isLoopback(url) {
  const u = new URL(url);
  if (["data:", "blob:", "about:", "chrome-extension:", "chrome:"].includes(u.protocol)) return true;
  const host = u.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

/** A browser session; `offsite` lists every non-loopback request that was attempted. */
export async function launch({
  colorScheme = "light",
  viewport = { width: 1200, height: 800 },
  ignoreHTTPSErrors = false,
  device = {}, // device emulation: isMobile, hasTouch, deviceScaleFactor, userAgent
} = {}) {
  const profile = mkdtempSync(join(tmpdir(), "sk-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    colorScheme,
    viewport,
    serviceWorkers: "block",
    ignoreHTTPSErrors, // a test's self-signed certificate
    ...device,
  });
  const session = { context, offsite: [], requests: [], consoleErrors: [] };
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (isLoopback(url)) return route.continue();
    session.offsite.push(url);
    return route.abort("blockedbyclient");
  });
  context.on("request", (request) => {
    session.requests.push({ url: request.url(), method: request.method(), at: Date.now() });
    if (!isLoopback(request.url()) && !session.offsite.includes(request.url())) {
      session.offsite.push(request.url());
    }
  });
  session.page = context.pages()[0] || (await context.newPage());
  session.page.on("console", (msg) => {
    if (msg.type() === "error") session.consoleErrors.push(msg.text());
  });
  session.page.on("pageerror", (error) => session.consoleErrors.push(String(error)));
  session.close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return session;
}

/** Wait until the box has loaded its index and encoder (a search resolves). */
export async function openBox(page) {
  await page.waitForFunction(() => window.siteKnowledge); // the launcher module has run
  await page.evaluate(() => window.siteKnowledge.open());
  await page.locator(".skn-box").waitFor({ state: "visible" });
  await page.evaluate(() => window.siteKnowledge.search("warm up"));
}

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** A static file server on 127.0.0.1 for a built site; `bytes` counts what it sent per path. */
export async function serveStatic(root) {
  const http = await import("node:http");
  const fs = await import("node:fs");
  const path = await import("node:path");
  const served = [];
  const missing = [];
  let url = null;
  const server = http.createServer((req, res) => {
    let pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = path.join(root, pathname);
    if (!file.startsWith(path.resolve(root))) return res.writeHead(403).end();
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
    if (!fs.existsSync(file)) {
      missing.push(pathname);
      return res.writeHead(404).end("not found");
    }
    if (pathname === "/sitemap.xml") {
      // Serve the site as if at its site_url, so Material's instant navigation (which keeps
      // only the sitemap's paths of the host) knows its pages.
      const xml = fs.readFileSync(file, "utf8");
      const locs = [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
      const root = locs.reduce((a, b) => (b.length < a.length ? b : a), locs[0] || "");
      const body = root ? xml.split(`<loc>${root}`).join(`<loc>${url}`) : xml;
      served.push({ path: pathname, bytes: Buffer.byteLength(body) });
      return res.writeHead(200, { "content-type": "application/xml" }).end(body);
    }
    const size = fs.statSync(file).size;
    served.push({ path: pathname, bytes: req.method === "HEAD" ? 0 : size, method: req.method });
    res.writeHead(200, {
      "content-type": TYPES[path.extname(file)] || "application/octet-stream",
      "content-length": size,
      "cache-control": "no-cache",
    });
    fs.createReadStream(file).pipe(res);
  });
  const port = Number(process.env.SK_SITE_PORT || 0);
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${server.address().port}/`;
  return { url, served, missing, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Runs fn({server, session, page}) with siteDir served over loopback and a fresh browser,
 * closing both afterwards. */
export async function withSite(siteDir, fn, options = {}) {
  const server = await serveStatic(siteDir);
  const session = await launch(options);
  try {
    return await fn({ server, session, page: session.page });
  } finally {
    await session.close();
    await server.close();
  }
}

/** Configure the box before the launcher runs (window.siteKnowledgeConfig overrides). */
export async function override(page, config) {
  await page.addInitScript((c) => {
    window.siteKnowledgeConfig = c;
  }, config);
}
