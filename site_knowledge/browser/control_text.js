// The JavaScript twin of site_knowledge/gateway/control_text.py: chat-template control text in
// a visitor's words made inert before the in-browser models template it. Each opening bracket of
// a control-token shape (<|name|>, <｜name｜>, <name>, </name>, [NAME], [/NAME]) gets a
// zero-width space after it, so no tokenizer can match the token's spelling; applying it twice
// changes nothing more. tests/data/control_text_vectors.json holds the two together.

import { pyRegex } from "./pystr.js";

export const BREAK = "\u200b";
/** control_text.py's CONTROL_SHAPE, verbatim. */
export const CONTROL_SHAPE_SOURCE =
  String.raw`<(?=[|\uff5c])` +
  String.raw`|<(?=/?[A-Za-z0-9_][A-Za-z0-9_.\-]*>)` +
  String.raw`|\[(?=/?[A-Za-z_][A-Za-z0-9_]*\])`;
const CONTROL_SHAPE = pyRegex(CONTROL_SHAPE_SOURCE, { global: true });

/** `text` with every control-token shape broken by a zero-width space. */
export function neutralise(text) {
  return text.replace(CONTROL_SHAPE, (bracket) => bracket + BREAK);
}

/** An earlier exchange with its question and answer neutralised. */
export function neutraliseTurn({ question, answer }) {
  return { question: neutralise(question), answer: neutralise(answer) };
}
