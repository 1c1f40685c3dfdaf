// Prompt assembly (DESIGN.md, "Prompt assembly"), laid out exactly as the gateway lays it out
// (site_knowledge/gateway/prompt.py, held to it by tests/data/prompt_vectors.json): the
// artifact's stable system prompt, frozen earlier exchanges, then the numbered excerpts, the
// premise notice and the question. Budgets in characters (code points, as Python counts).

import { neutralise } from "./control_text.js";
import { length, pyRegex, strip } from "./pystr.js";

/**
 * The answer's sampling settings in llama-server's names, as the gateway sends them
 * (gateway/prompt.py `sampling`): greedy, a mild penalty on the last 128 tokens (small models
 * otherwise loop), and stopped where the answer would start a new turn of this layout.
 */
export const SAMPLING = Object.freeze({
  temperature: 0,
  repeat_penalty: 1.1,
  repeat_last_n: 128,
  stop: Object.freeze(["\nQuestion:", "\nExcerpts from the site:"]),
});

const CITATION_STRIP = pyRegex(String.raw`[ \t]?\[\d{1,3}\]`, { global: true });

/** An earlier answer as history keeps it: citation markers removed, once, when it is frozen. */
export function freezeAnswer(text) {
  return strip(text.replace(CITATION_STRIP, ""));
}

/** The newest exchanges that fit `history_chars`, at most `max_exchanges`, oldest first. */
export function fitHistory(history, { history_chars: historyChars, max_exchanges: maxExchanges }) {
  const kept = [];
  let used = 0;
  for (const turn of history.slice(-maxExchanges).reverse()) {
    const size = length(turn.question) + length(freezeAnswer(turn.answer));
    if (used + size > historyChars) break;
    kept.unshift(turn);
    used += size;
  }
  return kept;
}

/** A passage's label: its source's title, then its heading path when that differs (grounding's
 * heading_label). */
export function headingLabel(title, heading) {
  return heading && heading !== title ? `${title} > ${heading}` : title;
}

/** The best passages, whole, while they fit `evidence_chars` (the first always goes in); a
 * page's title, heading and text with chat-template control text made inert, as the gateway's
 * prompt.page_evidence makes them. */
export function fitEvidence(results, { evidence_chars: evidenceChars }) {
  const evidence = [];
  let used = 0;
  for (const r of results) {
    const text = neutralise(r.text);
    const size = length(text);
    if (evidence.length && used + size > evidenceChars) break;
    const title = neutralise(r.title);
    const label = headingLabel(title, neutralise(r.heading ?? ""));
    const fiction = r.authority === "fiction";
    evidence.push({ n: evidence.length + 1, label, text, url: r.url, title, id: r.id, fiction });
    used += size;
  }
  return evidence;
}

/** A passage as grounding reads it (the gateway's Evidence.passage): label, text, fiction, url. */
export function passageOf({ label, text, fiction, url }) {
  return { label, text, fiction, url };
}

/** A word that makes a visitor's text a question or a request rather than a search term. */
const ASKING = pyRegex(
  String.raw`\b(?:what|whats|who|whom|whose|when|where|why|how|which|is|are|was|were|am|do|does|did|` +
  String.raw`can|could|should|would|will|has|have|had|tell|explain|describe|list|show|give|name|` +
  String.raw`summari[sz]e|compare|define|find)\b`, { ignoreCase: true });
const WORDS = pyRegex(String.raw`[^\W_]+`, { global: true });
const TERMS_MAX_WORDS = 4;
const TRAILING = pyRegex(String.raw`[?!. ]+$`);

/**
 * The question as the model reads it (gateway/prompt.py `as_asked`): a first question of at
 * most four words that asks nothing becomes "What does the site say about …?"; asked bare, small
 * models answer that the site does not cover a search term.
 */
export function asAsked(question, history = []) {
  const words = question.match(WORDS) || [];
  if (history.length || !words.length || words.length > TERMS_MAX_WORDS || ASKING.test(question)) {
    return question;
  }
  return `What does the site say about ${strip(strip(question).replace(TRAILING, ""))}?`;
}

/** Chat messages: system, frozen history, then the excerpts, the premise notice (if any) and
 * the question (`asAsked`). */
export function buildMessages(system, history, evidence, question, notice = "") {
  const messages = [{ role: "system", content: system }];
  for (const turn of history) {
    messages.push({ role: "user", content: turn.question });
    messages.push({ role: "assistant", content: freezeAnswer(turn.answer) });
  }
  const blocks = evidence.map((e) => `[${e.n}] ${e.label} (${e.url})\n${e.text}`).join("\n\n");
  const note = notice ? `${notice}\n\n` : "";
  messages.push({
    role: "user",
    content: `Excerpts from the site:\n\n${blocks || "(no excerpts)"}\n\n${note}Question: ${asAsked(question, history)}`,
  });
  return messages;
}
