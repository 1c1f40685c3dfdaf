// Prompt assembly (DESIGN.md, "Prompt assembly"), laid out exactly as the gateway lays it out
// (site_knowledge/gateway/prompt.py): the artifact's stable system prompt, frozen earlier
// exchanges, then the numbered excerpts and the question. Budgets in characters.

const CITATION = /\[(\d{1,3})\]/g;
const CITATION_STRIP = /[ \t]?\[\d{1,3}\]/g;

/** An earlier answer as history keeps it: citation markers removed, once, when it is frozen. */
export function freezeAnswer(text) {
  return text.replace(CITATION_STRIP, "").trim();
}

/** The newest exchanges that fit `history_chars`, at most `max_exchanges`, oldest first. */
export function fitHistory(history, { history_chars: historyChars, max_exchanges: maxExchanges }) {
  const kept = [];
  let used = 0;
  for (const turn of history.slice(-maxExchanges).reverse()) {
    const size = turn.question.length + freezeAnswer(turn.answer).length;
    if (used + size > historyChars) break;
    kept.unshift(turn);
    used += size;
  }
  return kept;
}

/** The best passages, whole, while they fit `evidence_chars` (the first always goes in). */
export function fitEvidence(results, { evidence_chars: evidenceChars }) {
  const evidence = [];
  let used = 0;
  for (const r of results) {
    if (evidence.length && used + r.text.length > evidenceChars) break;
    const label = r.heading && r.heading !== r.title ? `${r.title} > ${r.heading}` : r.title;
    evidence.push({ n: evidence.length + 1, label, text: r.text, url: r.url, title: r.title, id: r.id });
    used += r.text.length;
  }
  return evidence;
}

/** Chat messages: system, frozen history, then the excerpts and the question. */
export function buildMessages(system, history, evidence, question) {
  const messages = [{ role: "system", content: system }];
  for (const turn of history) {
    messages.push({ role: "user", content: turn.question });
    messages.push({ role: "assistant", content: freezeAnswer(turn.answer) });
  }
  const blocks = evidence.map((e) => `[${e.n}] ${e.label} (${e.url})\n${e.text}`).join("\n\n");
  messages.push({
    role: "user",
    content: `Excerpts from the site:\n\n${blocks || "(no excerpts)"}\n\nQuestion: ${question}`,
  });
  return messages;
}

/** Citations the text makes to the evidence, in order of first use; unknown numbers dropped. */
export function citationsOf(text, evidence) {
  const seen = new Set();
  const out = [];
  for (const match of text.matchAll(CITATION)) {
    const n = Number(match[1]);
    const e = evidence[n - 1];
    if (!e || seen.has(n)) continue;
    seen.add(n);
    out.push({ n, url: e.url, title: e.label });
  }
  return out;
}

/** The answer as shown: citation markers that match no evidence removed. */
export function dropUnknownCitations(text, evidence) {
  return text.replace(/[ \t]?\[(\d{1,3})\]/g, (m, n) => (evidence[Number(n) - 1] ? m : ""));
}
