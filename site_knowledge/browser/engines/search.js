// Search only: the best passages as links, and a plain sentence that no model is available.

export function runSearchOnly({ found, meta, view }) {
  view.passages(found.results);
  return {
    status: "answered",
    engine: "search",
    by: "search only (no language model)",
    text: meta.prompt.no_model,
    citations: found.results.map((r, i) => ({ n: i + 1, url: r.url, title: r.title })),
    refused: false,
    keepInMemory: false,
  };
}
