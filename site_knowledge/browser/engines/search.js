// Search only: the best passages as links, and a plain sentence that no model is available.

import { say, speaksEnglish } from "../strings.js";

export function runSearchOnly({ found, meta, view }) {
  view.passages(found.results);
  return {
    status: "answered",
    engine: "search",
    by: "search only (no language model)",
    text: speaksEnglish() ? meta.prompt.no_model : say("noModel"),
    citations: found.results.map((r, i) => ({ n: i + 1, url: r.url, title: r.title })),
    refused: false,
    keepInMemory: false,
  };
}
