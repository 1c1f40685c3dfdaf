// Prompt assembly (DESIGN.md, "Prompt assembly"): the artifact's stable system prompt, frozen
// earlier exchanges, then numbered evidence and the question. Budgets in characters.

const CITATION = /\[(\d+)\]/g;

/** An earlier answer as history keeps it: citation markers removed, once, when it is frozen. */
export function freezeAnswer(text) {
  return text.replace(/\s*\[\d+\]/g, "").trim();
}

/** The newest exchanges that fit `historyChars`, at most `maxExchanges`, oldest first. */
export function fitHistory(history, { history_chars: historyChars, max_exchanges: maxExchanges }) {
  const kept = [];
  let used = 0;
  for (const turn of history.slice(-maxExchanges).reverse()) {
    const size = turn.question.length + turn.answer.length;
    if (used + size > historyChars) break;
    used += size;
    kept.unshift(turn);
  }
  return kept;
}

/** Numbered evidence within `evidenceChars`; the last passage is cut to fit, never dropped first. */
export function fitEvidence(results, { evidence_chars: evidenceChars }) {
  const evidence = [];
  let used = 0;
  for (const r of results) {
    const label = r.heading && r.heading !== r.title ? `${r.title} > ${r.heading}` : r.title;
    const room = evidenceChars - used - label.length;
    if (room < 80) break;
    const text = r.text.length > room ? r.text.slice(0, room).replace(/\s+\S*$/, "") + " …" : r.text;
    used += label.length + text.length;
    evidence.push({ n: evidence.length + 1, label, text, url: r.url, title: r.title, id: r.id });
  }
  return evidence;
}

/** Chat messages: system, frozen history, then the evidence and the question. */
export function buildMessages(system, history, evidence, question) {
  const messages = [{ role: "system", content: system }];
  for (const turn of history) {
    messages.push({ role: "user", content: turn.question });
    messages.push({ role: "assistant", content: turn.answer });
  }
  const blocks = evidence.map((e) => `[${e.n}] ${e.label}\n${e.text}`);
  messages.push({
    role: "user",
    content: `Evidence:\n\n${blocks.join("\n\n")}\n\nQuestion: ${question}`,
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
  return text.replace(/\s*\[(\d+)\]/g, (m, n) => (evidence[Number(n) - 1] ? m : ""));
}
