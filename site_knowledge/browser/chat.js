// The chat box: one per tab, mounted on first open and kept across Material's instant
// navigation. It refuses attempts to change the assistant's rules and off-topic questions before
// any engine, searches in a worker, asks the engines in the configured order (saying out loud
// every time it falls back), and shows only grounded answers: the gateway grounds its own, the
// box grounds the in-browser models' (grounding.js, in the worker) before showing them as final.

import { runGateway } from "./engines/gateway.js";
import { loadWllama, probeWebGPU, runWebLLM, runWllama } from "./engines/local.js";
import { neutralise, neutraliseTurn } from "./control_text.js";
import { runSearchOnly } from "./engines/search.js";
import { isInjection } from "./grounding.js";
import { buildMessages, fitEvidence, fitHistory, freezeAnswer, passageOf } from "./prompt.js";
import { legible } from "./launcher.js";
import { retrievalQuery } from "./retrieval.js";
import { pageLanguage, say, speaksEnglish } from "./strings.js";

const ENGINES = { gateway: runGateway, webllm: runWebLLM, wllama: runWllama, search: runSearchOnly };
const LOCAL_MODELS = new Set(["webllm", "wllama"]);
const FORGET = /^\s*\/?forget\s*$/i;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== null && value !== undefined) node.setAttribute(key, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

class Worker_ {
  constructor(url) {
    this.worker = new Worker(url, { type: "module" });
    this.pending = new Map();
    this.next = 1;
    this.worker.onmessage = ({ data }) => {
      const job = this.pending.get(data.id);
      if (!job) return;
      if (data.progress) return job.onProgress(data.progress);
      this.pending.delete(data.id);
      if (data.error) job.reject(new Error(data.error));
      else job.resolve(data.result);
    };
  }

  call(message, onProgress = () => {}) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, ...message });
    });
  }
}

/** The view of one exchange in the log. */
class ExchangeView {
  constructor(log, question) {
    this.notes = el("ul", { class: "skn-notes" });
    this.line = el("p", { class: "skn-queue", hidden: "" });
    this.text = el("div", { class: "skn-text", "aria-busy": "true" });
    this.list = el("div", { class: "skn-passages" });
    this.cites = el("ol", { class: "skn-cites", "aria-label": say("sources") });
    this.by = el("p", { class: "skn-by" });
    this.tools = el("div", { class: "skn-tools", hidden: "" });
    this.node = el(
      "div",
      { class: "skn-exchange" },
      el("p", { class: "skn-q" }, question),
      el("div", { class: "skn-a" }, this.notes, this.line, this.text, this.list, this.cites, this.by, this.tools),
    );
    log.append(this.node);
    this.log = log;
  }

  scroll() {
    this.log.scrollTop = this.log.scrollHeight;
  }

  note(message) {
    this.notes.append(el("li", {}, message));
    this.scroll();
  }

  queued(position) {
    if (position === null || position === undefined) {
      this.line.hidden = true;
      return;
    }
    this.line.hidden = false;
    this.line.textContent = say("busy", { n: position });
  }

  append(delta) {
    this.text.textContent += delta;
    this.scroll();
  }

  passages(results) {
    this.list.replaceChildren(
      ...results.map((r) =>
        el(
          "article",
          {},
          el("a", { href: r.href }, r.heading && r.heading !== r.title ? `${r.title} › ${r.heading}` : r.title),
          el("p", {}, r.text.length > 280 ? r.text.slice(0, 280).replace(/\s+\S*$/, "") + " …" : r.text),
        ),
      ),
    );
  }

  /** The pages being read, listed as soon as they are known (the gateway's `sources` event,
   * or the local search's hits before an in-browser model runs): [{n, title, href}]. */
  sources(list) {
    this.read = list;
    this.cites.replaceChildren(...list.map((s) => this.source(s, false)));
    this.cites.setAttribute("aria-label", "Reading");
    this.cites.className = "skn-cites skn-reading";
    this.cites.hidden = !list.length;
    this.scroll();
  }

  source(s, cited) {
    return el(
      "li",
      { value: s.n, class: cited ? "skn-cited" : null },
      el("a", { href: s.href }, s.title || s.url),
      cited ? el("span", { class: "skn-mark" }, " (cited)") : null,
    );
  }

  /** The finished answer: the pages read with the cited ones marked, then any cited page the
   * reading list did not hold (the structured facts); or the pages consulted when none is cited. */
  finish({ text, citations, sources, by, grounded = true, refused = false }) {
    this.text.textContent = text;
    this.text.setAttribute("aria-busy", "false");
    this.node.querySelector(".skn-a").classList.toggle("skn-refused", Boolean(refused));
    this.queued(null);
    if (grounded === false) this.text.after(el("p", { class: "skn-grounding", role: "note" }, say("ungrounded")));
    const read = sources && sources.length ? sources : this.read || [];
    const cited = citations || [];
    const isCited = (s) => cited.some((c) => (c.n && c.n === s.n) || (c.href && c.href === s.href && c.title === s.title));
    const extra = cited.filter((c) => !read.some((s) => (c.n && c.n === s.n) || (c.href === s.href && c.title === s.title)));
    const items = [...read.map((s) => [s, isCited(s)]), ...extra.map((c) => [c, true])];
    this.cites.replaceChildren(...items.map(([s, mark]) => this.source(s, mark && read.length > 0)));
    this.cites.setAttribute("aria-label", say(cited.length ? "sources" : "consulted"));
    this.cites.className = cited.length ? "skn-cites" : "skn-cites skn-consulted";
    this.cites.hidden = !items.length;
    this.by.textContent = by ? say("answeredBy", { by }) : "";
    this.scroll();
  }

  /** Copy (the answer as Markdown, its citations as links) and, for an answer the gateway
   * gave an id, a vote up or down. */
  actions({ markdown, vote }) {
    const said = el("span", { class: "skn-said", role: "status" });
    const copy = el("button", { type: "button", class: "skn-copy", "aria-label": "Copy the answer as Markdown" }, say("copy"));
    copy.addEventListener("click", async () => {
      said.textContent = (await copyText(markdown)) ? say("copied") : "Copying is not allowed here.";
    });
    const buttons = [];
    // Words, not emoji: they read the same everywhere, to everyone (and to screen readers).
    const thumb = (value, label) => {
      const button = el("button", { type: "button", class: `skn-vote skn-${value}`, "aria-pressed": "false" }, label);
      button.addEventListener("click", async () => {
        const ok = await vote(value);
        if (ok) for (const b of buttons) b.setAttribute("aria-pressed", String(b === button));
        said.textContent = ok ? "Thanks for the feedback." : "The vote could not be sent.";
      });
      buttons.push(button);
      return button;
    };
    this.tools.replaceChildren(copy, ...(vote ? [thumb("up", "Good answer"), thumb("down", "Bad answer")] : []), said);
    this.tools.hidden = false;
  }
}

/** An answer as Markdown: each [n] a link to its source, then the sources as a list. */
export function answerMarkdown(text, citations) {
  const byN = new Map(citations.map((c) => [c.n, c]));
  const body = text.replace(/\[(\d+)\]/g, (marker, n) => (byN.has(Number(n)) ? `[${marker}](${byN.get(Number(n)).href})` : marker));
  const escape = (title) => String(title).replace(/([\[\]])/g, "\\$1");
  const list = citations.map((c) => `${c.n}. [${escape(c.title || c.href)}](${c.href})`);
  return list.length ? `${body.trim()}\n\nSources:\n\n${list.join("\n")}\n` : `${body.trim()}\n`;
}

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = el("textarea", { class: "skn-sr", "aria-hidden": "true", tabindex: "-1" });
    area.value = text;
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

class ChatBox {
  constructor(config, base) {
    this.config = config;
    this.base = base;
    this.vendorBase = new URL("vendor/", base).href;
    this.root = new URL(config.root || "./", document.baseURI).href;
    this.history = [];
    this.queue = Promise.resolve();
    this.stats = { engineCalls: { gateway: 0, webllm: 0, wllama: 0, search: 0 }, lastTimings: null };
    this.worker = new Worker_(new URL("search-worker.js", base));
    this.bars = new Map();
    this.mount();
  }

  mount() {
    // The box is shown only once its stylesheet applies: unstyled, it sits in the page's flow
    // at the end of <body>, and focusing its input would scroll the page there.
    const sheet = el("link", { rel: "stylesheet", href: new URL("chat.css", this.base).href });
    this.styled = new Promise((resolve) => {
      sheet.addEventListener("load", resolve, { once: true });
      sheet.addEventListener("error", resolve, { once: true });
    });
    document.head.append(sheet);
    this.status = el("div", { class: "skn-status", role: "status", "aria-live": "polite" });
    // tabindex: the conversation scrolls, so a keyboard must be able to reach it.
    this.log = el("div", { class: "skn-log", role: "log", "aria-live": "polite", "aria-label": "Conversation", tabindex: "0" });
    this.input = el("textarea", {
      id: "skn-input",
      rows: "2",
      placeholder: "Ask about this site (“forget” clears the chat)",
      onkeydown: (e) => {
        if (e.key === "Enter" && !e.shiftKey) {
          e.preventDefault();
          this.form.requestSubmit();
        }
      },
    });
    this.form = el(
      "form",
      {
        class: "skn-form",
        onsubmit: (e) => {
          e.preventDefault();
          const q = this.input.value;
          this.input.value = "";
          if (q.trim()) this.ask(q);
        },
      },
      el("label", { for: "skn-input", class: "skn-sr" }, say("question")),
      this.input,
      el("button", { type: "submit" }, say("ask")),
    );
    this.box = el(
      "section",
      { class: "skn-box", role: "dialog", "aria-modal": "true", "aria-labelledby": "skn-title", hidden: "" },
      el(
        "div", // not <header>: inside the dialog it would be a second banner landmark
        { class: "skn-head" },
        el("h2", { id: "skn-title" }, say("askSite")),
        el("button", { type: "button", class: "skn-close", "aria-label": say("close"), onclick: () => this.close() }, "×"),
      ),
      this.status,
      this.log,
      this.form,
    );
    this.box.addEventListener("keydown", (e) => {
      if (e.key === "Escape") this.close();
      else if (e.key === "Tab") this.trapFocus(e);
    });
    this.wrapper = el("div", { id: "site-knowledge", class: "skn-root" }, this.box);
    document.body.append(this.wrapper);
    const scheme = () => {
      this.wrapper.classList.toggle("skn-dark", isDark());
      this.styled.then(() => {
        legible(this.wrapper);
        const launcher = document.querySelector(".skn-launch");
        if (launcher) legible(launcher, { links: false });
      });
    };
    scheme();
    const observer = new MutationObserver(scheme);
    observer.observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-bs-theme", "data-theme"] });
    matchMedia("(prefers-color-scheme: dark)").addEventListener("change", scheme);
  }

  progress(what, loaded, total) {
    let bar = this.bars.get(what);
    if (!bar) {
      const meter = el("progress", { max: "1", value: "0" });
      const label = el("span", {}, `Loading ${what}`);
      bar = { node: el("div", { class: "skn-bar" }, label, meter), meter, label };
      this.bars.set(what, bar);
      this.status.append(bar.node);
    }
    const fraction = total ? Math.min(1, loaded / total) : 0;
    bar.meter.value = fraction;
    const mb = total > 1 ? ` (${(total / 1048576).toFixed(1)} MB)` : "";
    bar.label.textContent = fraction >= 1 ? `Loaded ${what}${mb}` : `Loading ${what}${mb}`;
    if (fraction >= 1) setTimeout(() => bar.node.remove(), 1500);
  }

  ready() {
    this.loading ||= this.worker
      .call({ type: "init", artifactUrl: new URL(this.config.artifact, this.base).href, vendorBase: this.vendorBase }, (p) =>
        this.progress(p.what === "artifact" ? "site index" : "query encoder", p.loaded, p.total),
      )
      .then((init) => {
        this.meta = init.meta;
        return init;
      });
    this.loading.catch(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** Show the box (once its stylesheet applies) with focus in the input; resolves when shown. */
  async open() {
    if (this.box.hidden) this.opener = document.activeElement;
    this.ready().then(() => this.warm(), (error) => this.fail(error));
    await this.styled;
    this.box.hidden = false;
    this.lockPage();
    this.input.focus({ preventScroll: true });
    return this;
  }

  /** Tab and Shift+Tab go round the open box's controls and never leave it. */
  trapFocus(event) {
    const focusable = [...this.box.querySelectorAll("a[href], button, textarea, [tabindex='0']")].filter(
      (n) => !n.disabled && n.offsetParent !== null,
    );
    if (!focusable.length) return;
    const first = focusable[0];
    const last = focusable.at(-1);
    if (event.shiftKey && document.activeElement === first) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && document.activeElement === last) {
      event.preventDefault();
      first.focus();
    }
  }

  /** Full screen (phones), the page behind must not scroll under the visitor's finger. */
  lockPage() {
    const fullScreen = this.box.getBoundingClientRect().width >= window.innerWidth;
    document.documentElement.classList.toggle("skn-locked", fullScreen);
  }

  close() {
    this.box.hidden = true;
    document.documentElement.classList.remove("skn-locked");
    if (this.opener && this.opener.isConnected) this.opener.focus();
  }

  fail(error) {
    this.status.append(el("p", { class: "skn-error" }, `The chat box could not load: ${error.message}`));
  }

  /** When the box opens: if no gateway answers and WebGPU is absent, warm the CPU model. */
  async warm() {
    if (this.warmed) return;
    this.warmed = true;
    const engines = this.config.engines;
    if (!engines.includes("wllama")) return;
    if (engines.includes("gateway") && (await this.gatewayUp())) return;
    if (engines.includes("webllm") && (await probeWebGPU()).ok) return;
    loadWllama(this.context()).catch(() => {});
  }

  async gatewayUp() {
    for (const gateway of this.config.gateways) {
      try {
        const url = new URL("healthz", gateway.endsWith("/") ? gateway : gateway + "/");
        // no-cors: any answer at all (even opaque) means the server is up.
        const response = await fetch(url, { mode: "no-cors", signal: AbortSignal.timeout(3000) });
        if (response.type === "opaque" || response.ok) return true;
      } catch {}
    }
    return false;
  }

  context(extra = {}) {
    return {
      config: this.config,
      vendorBase: this.vendorBase,
      system: this.meta.prompt.system,
      meta: this.meta,
      progress: (what, loaded, total) => this.progress(what, loaded, total),
      answerTokens: this.config.answer_tokens || this.meta.prompt.budgets.browser.answer_tokens,
      ...extra,
    };
  }

  href(url) {
    return new URL(url, this.root).href;
  }

  /** Passages or the gateway's sources as the box lists them: [{n, url, title, href}]. */
  consulted(list) {
    return list.map((e, i) => ({ n: e.n || i + 1, url: e.url, title: e.title || e.label, href: this.href(e.url) }));
  }

  /**
   * Search the site as the box does. `history` (earlier questions, oldest first) makes the
   * retrieval query a follow-up's (SPEC.md, "Follow-ups").
   */
  async search(question, { topK = this.config.top_k, mode = "hybrid", history = [] } = {}) {
    await this.ready();
    const found = await this.worker.call({ type: "search", question, history, topK, mode, lang: pageLanguage() });
    for (const r of found.results) r.href = this.href(r.url);
    this.stats.lastTimings = found.timings;
    return found;
  }

  forget() {
    this.history = [];
  }

  /** Send a vote on an answer to the gateway that gave it: the answer's id and the vote. */
  async vote(gateway, id, value) {
    try {
      const url = new URL("api/feedback", gateway.endsWith("/") ? gateway : gateway + "/");
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id, vote: value }),
      });
      return response.ok;
    } catch {
      return false;
    }
  }

  ask(question) {
    const run = this.queue.then(() => this.answer(question));
    this.queue = run.catch(() => {});
    return run;
  }

  /** The remembered exchanges less any whose question or answer tries to change the
   * assistant's role or rules: such a turn never reaches a model (the gateway drops the same). */
  cleanHistory() {
    return this.history.filter((t) => !isInjection(t.question) && !isInjection(t.answer));
  }

  /** The prompt for the in-browser models, as the gateway builds its own: the visitor's words
   * with chat-template control text neutralised, and the premise notice. */
  async prompt(question, history, evidence) {
    const asked = neutralise(question);
    const notice = await this.worker.call({ type: "notice", question: asked });
    const messages = buildMessages(this.meta.prompt.system, history.map(neutraliseTurn), evidence, asked, notice);
    this.stats.lastPrompt = messages;
    return messages;
  }

  /** An in-browser model's finished answer as the visitor should read it (grounding.js). */
  async ground(answer, question, evidence) {
    const passages = evidence.map(passageOf);
    const checked = await this.worker.call({ type: "ground", answer, question, evidence: passages });
    this.stats.lastCheck = { answer, question, evidence: passages, ...checked };
    const citations = [
      ...checked.cited.map((n) => evidence[n - 1]).map((e) => ({ n: e.n, url: e.url, title: e.label })),
      ...checked.facts.map((p, k) => ({ n: evidence.length + k + 1, url: p.url, title: p.label })),
    ];
    return { text: checked.text, citations, grounded: checked.grounded, declined: checked.declined };
  }

  /** The gate's refusal: the artifact's on an English page, else in the page's language. */
  refusalText() {
    return speaksEnglish() ? this.meta.prompt.refusal : say("refusal", { site: this.meta.site.name });
  }

  async answer(question) {
    const view = new ExchangeView(this.log, question);
    if (FORGET.test(question)) {
      this.forget();
      const text = say("forgotten");
      view.finish({ text, citations: [], by: null });
      return { text, citations: [], engine: "none", refused: false, grounded: true };
    }
    try {
      await this.ready();
    } catch (error) {
      const text = `The site index could not load (${error.message}).`;
      view.finish({ text, citations: [], by: null });
      return { text, citations: [], engine: "none", refused: false, grounded: true, error: true };
    }
    const started = performance.now();
    if (isInjection(question)) {
      const text = this.refusalText();
      view.finish({ text, citations: [], by: "the site's rules (the question asks the assistant to set them aside)", refused: true });
      return { text, citations: [], engine: "gate", refused: true, grounded: true, injection: true, ms: performance.now() - started };
    }
    const remembered = this.cleanHistory();
    const query = retrievalQuery(question, remembered, this.meta.retrieval.followup_turns);
    let found;
    try {
      found = await this.search(question, { history: remembered.map((turn) => turn.question) });
    } catch (error) {
      const text = `The search failed (${error.message}).`;
      view.finish({ text, citations: [], by: null });
      return { text, citations: [], engine: "none", refused: false, grounded: true, error: true };
    }
    this.stats.lastQuery = query;
    if (!found.gate.answerable) {
      const text = await this.worker.call({ type: "refusal", question, text: this.refusalText() });
      view.finish({ text, citations: [], by: "the site's relevance check (nothing on this site matches)", refused: true });
      return { text, citations: [], engine: "gate", refused: true, grounded: true, ms: performance.now() - started, gate: found.gate };
    }
    const budget = this.meta.prompt.budgets.browser;
    const history = fitHistory(remembered, budget);
    const evidence = fitEvidence(found.results, budget);
    let messages = null;
    const ctx = this.context({
      question, history, found, evidence, view,
      reading: (list) => view.sources(this.consulted(list)),
      messages: () => (messages ||= this.prompt(question, history, evidence)),
    });
    for (const name of this.config.engines) {
      const engine = ENGINES[name];
      if (!engine) continue;
      this.stats.engineCalls[name] += 1;
      if (LOCAL_MODELS.has(name)) view.sources(this.consulted(evidence));
      const result = await engine(ctx);
      if (result.status === "unavailable") continue;
      if (result.status === "stop") {
        // Interrupted or refused by a busy server: shown as it is, marked, never checked.
        view.finish({ text: result.text, citations: [], by: null });
        return { text: result.text, citations: [], engine: name, refused: false, grounded: null, stopped: true };
      }
      let { text, citations, grounded = true, refused = false } = result;
      if (LOCAL_MODELS.has(name)) {
        let declined;
        ({ text, citations, grounded, declined } = await this.ground(text, question, evidence));
        refused = Boolean(declined);
      }
      citations = citations.map((c) => ({ ...c, href: this.href(c.url) }));
      const consulted = this.consulted(name === "gateway" ? result.sources || [] : name === "search" ? [] : evidence);
      view.finish({ text, citations, sources: consulted, by: result.by, grounded, refused });
      const vote = result.id ? (value) => this.vote(result.gateway, result.id, value) : null;
      view.actions({ markdown: answerMarkdown(text, citations), vote });
      if (result.keepInMemory !== false && !refused && text) {
        this.history.push({ question, answer: freezeAnswer(text) });
        this.history = this.history.slice(-budget.max_exchanges);
      }
      return {
        text,
        citations: citations.map(({ url, title, href }) => ({ url: href, title, path: url })),
        sources: consulted.map(({ url, title, href }) => ({ url: href, title, path: url })),
        engine: name,
        by: result.by,
        refused: Boolean(refused),
        grounded,
        timing: result.timing,
        id: result.id || null,
        ms: performance.now() - started,
      };
    }
    const text = "No way to answer is available here.";
    view.finish({ text, citations: [], by: null });
    return { text, citations: [], engine: "none", refused: false, grounded: true };
  }
}

function isDark() {
  const md = document.body.getAttribute("data-md-color-scheme");
  if (md) return md === "slate";
  const bs = document.documentElement.getAttribute("data-bs-theme") || document.documentElement.getAttribute("data-theme");
  if (bs) return bs === "dark";
  return matchMedia("(prefers-color-scheme: dark)").matches;
}

export function mount(config, base) {
  return new ChatBox(config, base);
}
