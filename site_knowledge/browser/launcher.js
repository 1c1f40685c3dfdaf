// The only script a page view loads: a button and a keyboard shortcut (Ctrl/⌘+K) that import
// the chat box on first use. Survives Material's instant navigation: one box per tab.
// A page may set window.siteKnowledgeConfig before this runs to override the plugin's settings.
const tag = document.getElementById("site-knowledge-config");
const config = tag && { ...JSON.parse(tag.textContent), ...(window.siteKnowledgeConfig || {}) };

if (config && !window.siteKnowledge) {
  const base = new URL("./", import.meta.url);
  config.root = new URL(config.root || "./", document.baseURI).href;
  let box = null;
  const load = () => (box ||= import("./chat.js").then((m) => m.mount(config, base.href)));
  const api = {
    open: () => load().then((b) => b.open()).then(() => undefined),
    close: () => load().then((b) => b.close()),
    search: (question, options) => load().then((b) => b.search(question, options)),
    ask: (question) => load().then((b) => b.ask(question)),
    forget: () => load().then((b) => b.forget()),
    get history() {
      return box ? box.then((b) => b.history.map((t) => ({ ...t }))) : Promise.resolve([]);
    },
    get stats() {
      return box ? box.then((b) => b.stats) : Promise.resolve(null);
    },
  };
  window.siteKnowledge = api;

  const style = document.createElement("style");
  style.textContent =
    ".skn-launch{position:fixed;right:1rem;bottom:1rem;z-index:5;border:0;border-radius:2rem;" +
    "padding:.6rem 1rem;font:600 .9rem/1 system-ui,sans-serif;cursor:pointer;" +
    "--skn-accent:var(--md-primary-fg-color,#3f51b5);--skn-accent-fg:var(--md-primary-bg-color,#fff);" +
    "background:var(--skn-accent);color:var(--skn-accent-fg);" +
    "box-shadow:0 2px 8px #0004}.skn-launch:focus-visible{outline:3px solid #ffb300;outline-offset:2px}";
  document.head.append(style);

  const button = document.createElement("button");
  button.type = "button";
  button.className = "skn-launch";
  button.textContent = "Ask this site";
  // A page in another language fetches the box's strings (English pages need none).
  if (!/^(en\b|$)/i.test(document.documentElement.lang)) {
    import("./strings.js").then((m) => (button.textContent = m.say("askSite")));
  }
  button.setAttribute("aria-keyshortcuts", "Control+K Meta+K");
  button.title = "Ask this site (Ctrl+K)";
  button.addEventListener("click", api.open);
  const attach = () => {
    if (!button.isConnected) document.body.append(button);
    legible(button, { links: false });
  };
  attach();
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") {
      event.preventDefault();
      api.open();
    }
  });
  // Material's instant navigation swaps parts of the page: put the button back if it went.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(attach);
  }
  window.addEventListener("popstate", attach);
}

/** The site's colours, made legible: the accent (taken from the theme) darkened or lightened
 * until its text reads on it, and the links until they read on the box's backgrounds, each
 * to WCAG AA's 4.5:1. The site's palette is its own; the box must be readable on any. */
export function legible(root, { links = true } = {}) {
  root.style.removeProperty("--skn-accent");
  root.style.removeProperty("--skn-link");
  const probe = document.createElement("span");
  probe.hidden = true;
  root.append(probe);
  const read = (value) => {
    probe.style.color = value;
    const m = getComputedStyle(probe).color.match(/[\d.]+/g);
    return m ? m.slice(0, 3).map(Number) : [0, 0, 0];
  };
  const accent = read("var(--skn-accent)");
  const accentText = read("var(--skn-accent-fg)");
  const link = links && read("var(--skn-link)");
  const backgrounds = links && [read("var(--skn-bg)"), read("var(--skn-soft)")];
  probe.remove();
  const fixed = (colour, against) => {
    const towards = luminance(against[0]) > 0.18 ? [0, 0, 0] : [255, 255, 255];
    let c = colour;
    for (let step = 0; step < 20 && Math.min(...against.map((a) => contrast(c, a))) < 4.5; step++) {
      c = c.map((v, i) => Math.round(v + (towards[i] - v) * 0.1));
    }
    return c === colour ? null : `rgb(${c.join(", ")})`;
  };
  // The accent is a background under its own text: move it away from that text's lightness.
  const accentFixed = fixed(accent, [accentText]);
  if (accentFixed) root.style.setProperty("--skn-accent", accentFixed);
  const linkFixed = links && fixed(link, backgrounds);
  if (linkFixed) root.style.setProperty("--skn-link", linkFixed);
}

function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
