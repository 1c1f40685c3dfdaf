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
    "background:var(--md-primary-fg-color,#3f51b5);color:var(--md-primary-bg-color,#fff);" +
    "box-shadow:0 2px 8px #0004}.skn-launch:focus-visible{outline:3px solid #ffb300;outline-offset:2px}";
  document.head.append(style);

  const button = document.createElement("button");
  button.type = "button";
  button.className = "skn-launch";
  button.textContent = "Ask this site";
  button.setAttribute("aria-keyshortcuts", "Control+K Meta+K");
  button.title = "Ask this site (Ctrl+K)";
  button.addEventListener("click", api.open);
  const attach = () => {
    if (!button.isConnected) document.body.append(button);
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
