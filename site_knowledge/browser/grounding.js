// The JavaScript twin of site_knowledge/grounding (its SPEC.md, `sk-grounding/1`): injection
// detection, the premise notice, the claim check, citations by attribution and grounding a
// finished answer. Pure functions over the retrieval index's tokenizer and IDF; no DOM, so the
// search worker and the node tests share it. The Python code is the reference; its patterns,
// word lists and thresholds are the data file both import (grounding_rules.json, the patterns
// in Python's syntax, translated by pyRegex), and tests/data/grounding_vectors.json holds the
// two together.

import RULES from "./grounding_rules.json" with { type: "json" };
import { headingLabel } from "./prompt.js";
import { idf as bm25Idf, tokenize } from "./retrieval.js";
import { IGNORED_NAMES, STEM, SiteWords, WORD, WORD_PATTERN, fold, isName } from "./words.js";
import {
  asciiDigits,
  chars,
  isDigit,
  isSpace,
  isUpper,
  length,
  pyExec,
  pyRegex,
  pySearch,
  rstrip,
  splitSpace,
  strip,
} from "./pystr.js";

// ---- The regular expressions: Python's sources verbatim ----

/** Every pattern of site_knowledge/grounding as [Python source, re.IGNORECASE], by name
 * (grounding_rules.json, and words.js's WORD); the shared vectors compare them with Python's. */
export const PYTHON_PATTERNS = { ...RULES.patterns, WORD: WORD_PATTERN };

function compiled(name, options = {}) {
  const [source, ignoreCase] = PYTHON_PATTERNS[name];
  return pyRegex(source, { ignoreCase, ...options });
}

// ---- Text (text.py) ----

const ALL = { global: true };
const CITATION = compiled("CITATION", ALL);
const MARKER = compiled("MARKER", ALL);
const URL = compiled("URL", ALL);
const CODE = compiled("CODE", ALL);
const BOUNDARY = compiled("BOUNDARY", ALL);
const ABBREVIATION = compiled("ABBREVIATION");
const LIST_NUMBER = compiled("LIST_NUMBER", { fullmatch: true });
const NEGATION = compiled("NEGATION");
const SAYING = compiled("SAYING");
const SOURCE = compiled("SOURCE");
const REPORTED_CLAUSE = compiled("REPORTED_CLAUSE");
const REPORTED = compiled("REPORTED", ALL);
const CLAUSE = compiled("CLAUSE");
const NUMBER = compiled("NUMBER", ALL);
const ANSWER_MARKERS = compiled("ANSWER_MARKERS", ALL);
const CITE_PHRASE = compiled("CITE_PHRASE", ALL);
const STAND_IN = compiled("STAND_IN");
const CODE_TOKEN = compiled("CODE_TOKEN", ALL);
const IDENTIFIER = compiled("IDENTIFIER", ALL);
const NUMBER_WORDS = new Map(Object.entries(RULES.words.NUMBER_WORDS));

function wordsOf(text) {
  return text.match(WORD) || [];
}

/** Sentences and list items with their UTF-16 offsets in the answer (SPEC.md, "Sentences"): a
 * stop after an abbreviation, a single letter or a lone list number (`2.`) ends none. */
export function sentences(answer) {
  const out = [];
  let start = 0;
  for (const match of answer.matchAll(BOUNDARY)) {
    const head = answer.slice(start, match.index);
    if (!match[0].includes("\n") && (pySearch(ABBREVIATION, head.replace(/["')\]]+$/u, "")) || LIST_NUMBER.test(head))) {
      continue;
    }
    append(out, answer, start, match.index);
    start = match.index + match[0].length;
  }
  append(out, answer, start, answer.length);
  return out;
}

function append(out, answer, start, end) {
  const piece = answer.slice(start, end);
  const stripped = strip(piece);
  if (stripped) {
    const offset = start + piece.indexOf(stripped);
    out.push({ text: stripped, start: offset, end: offset + stripped.length });
  }
}

/** Text without citation markers, URLs, link targets or the backticks of inline code (the
 * code itself stays). */
export function plain(text) {
  return text.replace(MARKER, "").replace(URL, " ").replace(CODE, (code) => code.slice(1, -1));
}

/** The sentence with each citation phrase ("..., as mentioned in [1]") written as its markers. */
export function citePhrasesAsMarkers(sentence) {
  return sentence.replace(CITE_PHRASE, (_, markers) => " " + strip(markers));
}

/** A citation marker stands where a word belongs ("The package is [1]."). */
export function hasStandIn(sentence) {
  return pySearch(STAND_IN, sentence);
}

/** A sentence's code identifiers (CODE_TOKEN, then IDENTIFIER outside code and URLs), each once,
 * in order. */
export function identifiers(sentence) {
  const text = sentence.replace(MARKER, "").replace(URL, " ");
  const found = [...text.matchAll(CODE_TOKEN)].map((m) => m[1]);
  for (const m of text.replace(CODE_TOKEN, " ").matchAll(IDENTIFIER)) found.push(m[0]);
  return [...new Set(found)];
}

const WORD_CHAR = /^[\p{L}\p{N}_]$/u;
const ZERO_WIDTH = compiled("ZERO_WIDTH", ALL);

/** The identifier stands in the text verbatim, not inside a longer word. */
export function occurs(identifier, text) {
  for (let start = text.indexOf(identifier); start >= 0; start = text.indexOf(identifier, start + 1)) {
    const end = start + identifier.length;
    const before = start ? [...text.slice(Math.max(0, start - 2), start)].pop() : " ";
    const after = end < text.length ? String.fromCodePoint(text.codePointAt(end)) : " ";
    if (!WORD_CHAR.test(before) && !WORD_CHAR.test(after)) return true;
  }
  return false;
}

/** The sentence with each of the identifiers (longest first) written as the neutral word
 * "code", so that their parts are not read as names or numbers. */
function withoutIdentifiers(sentence, found) {
  for (const identifier of [...found].sort((a, b) => length(b) - length(a))) {
    sentence = sentence.split(identifier).join("code");
  }
  return sentence;
}

const VOWEL = /[aeiouy]/;
const UNDOUBLED = new Set("aeioulsfz");

/** A term with a regular verb ending folded away, as a quote is matched to the question:
 * worked, working and work share a key, as do lived/living/live and studied/study. */
export function inflectionKey(term) {
  let stem = chars(term);
  const ends = (suffix) => term.endsWith(suffix);
  if (stem.length > 4 && ends("ied")) {
    stem = [...stem.slice(0, -3), "y"];
  } else if (ends("ing") || ends("ed")) {
    const rest = stem.slice(0, ends("ing") ? -3 : -2);
    if (rest.length >= 3 && VOWEL.test(rest.join("")) && !(ends("ed") && rest.at(-1) === "e")) {
      const doubled = rest.at(-1) === rest.at(-2) && !UNDOUBLED.has(rest.at(-1));
      stem = doubled ? rest.slice(0, -1) : rest;
    }
  }
  if (stem.length > 3 && stem.at(-1) === "e") stem = stem.slice(0, -1);
  if (stem.length > 3 && stem.at(-1) === "y" && !"aeiou".includes(stem.at(-2))) {
    stem = [...stem.slice(0, -1), "i"];
  }
  return stem.join("");
}

/** Numbers as [as written, value]: digits with separators, k/m suffixes, number words. */
export function numbers(text) {
  const found = [];
  for (const match of text.matchAll(NUMBER)) {
    let value = Number(asciiDigits(match[1]).replaceAll(",", ""));
    const suffix = (match[2] || "").toLowerCase();
    value *= suffix === "k" ? 1000 : suffix === "m" ? 1_000_000 : 1;
    found.push([match[0], value]);
  }
  for (const word of wordsOf(text)) {
    const value = NUMBER_WORDS.get(word.toLowerCase());
    if (value !== undefined) found.push([word, value]);
  }
  return found;
}

/** The sentence denies something (not, never, no, n't, ...). */
export function isNegated(sentence) {
  return pySearch(NEGATION, sentence);
}

/** The sentence declines to answer (SAYING, SOURCE): "The site does not mention any MBA.";
 * negated before any clause it reports (REPORTED_CLAUSE): "The site states that the step will
 * not take place" answers. */
export function isDecline(sentence) {
  const saying = pyExec(SAYING, sentence);
  if (saying === null || !pySearch(SOURCE, sentence)) return false;
  const after = saying.index + saying[0].length;
  const reported = pyExec(REPORTED_CLAUSE, sentence.slice(after));
  return isNegated(reported === null ? sentence : sentence.slice(0, after + reported.index));
}

const META = compiled("META");

/** The sentence says only that the excerpts or the documentation state something, and denies
 * nothing (META on its plain text): "This can be seen in excerpt [1]." */
export function isMeta(sentence) {
  return !isNegated(sentence) && pySearch(META, plain(sentence));
}

// ---- Injection (injection.py) ----

const INJECTION = Object.keys(PYTHON_PATTERNS).filter((name) => name.startsWith("INJECTION_")).map((name) => compiled(name));

/** True when the text asks the assistant to drop its rules or take another role. */
export function isInjection(text) {
  return INJECTION.some((pattern) => pySearch(pattern, text));
}

// ---- Claims (claims.py) ----

const SENTENCE_OPENERS = compiled("SENTENCE_OPENERS");
const AGE = pyRegex(PYTHON_PATTERNS.AGE[0], { ignoreCase: true, global: true });
const PERSONAL = compiled("PERSONAL");
const PRIVATE_ALL = pyRegex(PYTHON_PATTERNS.PRIVATE[0], { ignoreCase: true, global: true });
const AFTER_COLON = compiled("AFTER_COLON");
const LIST_MARKER = compiled("LIST_MARKER");
/** A sentence of at most this many words (a list item, a one-word answer) has its opening word
 * checked as a name too. */
const SHORT = RULES.thresholds.SHORT;
const TRIVIAL_NUMBERS = new Set(RULES.thresholds.TRIVIAL_NUMBERS);
const DURATION = new Set(RULES.words.DURATION);
/** Units (tokenizer terms): a number's support must share a term other than its unit with the
 * claiming sentence. */
const UNITS = new Set([...DURATION, ...RULES.words.UNITS]);
/** A sentence or clause of at least ECHO_MIN_TERMS terms echoes planted text when a planted
 * sentence holds this share of its terms and more of them than any clean support sentence. */
const ECHO_SHARE = RULES.thresholds.ECHO_SHARE;
const ECHO_MIN_TERMS = RULES.thresholds.ECHO_MIN_TERMS;
/** A sum or difference needs more common ground than a stated number: two shared terms. */
const ARITHMETIC_SHARED = RULES.thresholds.ARITHMETIC_SHARED;
/** Least letters of a capitalised word that Support.completed reads as a name cut short. */
const CUT_NAME = RULES.thresholds.CUT_NAME;
const FIRST_YEAR = RULES.thresholds.YEARS[0];
const LAST_YEAR = RULES.thresholds.YEARS[1];
const isYear = (v) => Number.isInteger(v) && v >= FIRST_YEAR && v <= LAST_YEAR;
const SPAN = compiled("SPAN", ALL);
const MONTHS = new Set(RULES.words.MONTHS);

/** A month's three-letter key, or null for no word or a word that names no month. */
function month(word) {
  const key = word ? chars(fold(word)).slice(0, 3).join("") : "";
  return MONTHS.has(key) ? key : null;
}

/** The terms that are not numbers (a number never supports itself). */
function contentTerms(terms) {
  return terms.filter((t) => !chars(t).every(isDigit) && !NUMBER_WORDS.has(t));
}

/** Each word of the text (WORD) with the word after it, where only white space lies between them,
 * and where the first starts. */
function adjacentWords(text) {
  const matches = [...text.matchAll(WORD)];
  const out = [];
  for (let i = 0; i + 1 < matches.length; i++) {
    const gap = text.slice(matches[i].index + matches[i][0].length, matches[i + 1].index);
    if (gap && chars(gap).every(isSpace)) out.push([matches[i][0], matches[i + 1][0], matches[i].index]);
  }
  return out;
}

function shares(a, b) {
  for (const term of a) if (b.has(term)) return true;
  return false;
}

/** Each sentence of a text with whether it was planted: an injection attempt, or any later
 * sentence of its line (a paragraph), which carries the attempt's payload. */
export function* planted(text) {
  for (const line of text.split("\n")) {
    let tainted = false;
    for (const sentence of sentences(line)) {
      tainted = tainted || isInjection(sentence.text);
      yield [sentence, tainted];
    }
  }
}

/** The sentences of the texts, each as [text, planted]. */
function* supportSentences(texts) {
  for (const text of texts) for (const [sentence, isPlanted] of planted(text)) yield [sentence.text, isPlanted];
}

/** supportSentences with the content terms of the clean sentences right before and after each
 * one in its text: a number's context ("Default: 120" beside "The default value for the
 * voltage field ..."). */
function* withNeighbours(texts, tokenizeText) {
  for (const text of texts) {
    const found = [...planted(text)].map(([sentence, isPlanted]) => [sentence.text, isPlanted]);
    const terms = found.map(([sentence, isPlanted]) => (isPlanted ? new Set() : new Set(contentTerms(tokenizeText(sentence)))));
    for (let i = 0; i < found.length; i++) {
      const beside = new Set([...(i ? terms[i - 1] : []), ...(i + 1 < terms.length ? terms[i + 1] : [])]);
      yield [...found[i], beside];
    }
  }
}

/** The numbers `AGE` reads as ages in a text. */
function statedAges(text) {
  const ages = new Set();
  for (const match of text.matchAll(AGE)) {
    for (const group of match.slice(1)) if (group) for (const [, value] of numbers(group)) ages.add(value);
  }
  return ages;
}

/**
 * What an answer may state: the words of the evidence and the stable facts (less planted
 * sentences: an injection attempt and the rest of its paragraph; fiction apart, only good for
 * denials), each number with the terms of the sentences that state it, the ages stated
 * (`AGE`), the durations derivable from their years, and the term sets of the clean and the
 * planted sentences.
 */
export class Support {
  /**
   * @param {string[]} texts the non-fiction evidence texts and the system prompt
   * @param {(text: string) => string[]} tokenizeText the site's tokenizer
   * @param {number|null} referenceYear the artifact's build year
   * @param {string[]} fiction the fiction evidence texts
   */
  constructor(texts, tokenizeText, referenceYear = null, fiction = []) {
    this.tokenize = tokenizeText;
    this.words = new Set();
    this.contexts = new Map();
    this.arithmetic = new Map();
    this.clean = [];
    this.ages = new Set();
    this.planted = [];
    this.plantedWords = [];
    this.namesBefore = new Map();
    this.texts = [];
    this.dates = [];
    for (const [sentence, isPlanted, beside] of withNeighbours(texts, tokenizeText)) {
      const terms = new Set(contentTerms(tokenizeText(sentence)));
      if (isPlanted) {
        this.planted.push(terms);
        this.plantedWords.push(new Set(wordsOf(sentence).map(fold)));
        continue;
      }
      this.clean.push(terms);
      this.texts.push(sentence.replace(ZERO_WIDTH, ""));
      for (const age of statedAges(sentence)) this.ages.add(age);
      for (const w of wordsOf(sentence)) this.words.add(fold(w));
      for (const [word, following] of adjacentWords(sentence)) {
        if (!isUpper(chars(word)[0])) continue;
        if (!this.namesBefore.has(fold(following))) this.namesBefore.set(fold(following), new Set());
        this.namesBefore.get(fold(following)).add(word);
      }
      const values = numbers(sentence).map(([, value]) => value);
      for (const value of values) {
        if (!this.contexts.has(value)) this.contexts.set(value, []);
        this.contexts.get(value).push(new Set([...terms, ...beside]));
      }
      const months = new Set(wordsOf(sentence).map(month).filter((m) => m !== null));
      this.dates.push([new Set(values.filter(isYear)), months]);
      const operands = [...new Set(values.filter((v) => !isYear(v)))].sort((x, y) => x - y);
      for (let i = 0; i < operands.length; i++) {
        for (let j = i + 1; j < operands.length; j++) {
          for (const result of [operands[i] + operands[j], operands[j] - operands[i]]) {
            if (!this.arithmetic.has(result)) this.arithmetic.set(result, []);
            this.arithmetic.get(result).push(terms);
          }
        }
      }
    }
    this.fictionWords = new Set();
    for (const [sentence, isPlanted] of supportSentences(fiction)) {
      if (!isPlanted) for (const w of wordsOf(sentence)) this.fictionWords.add(fold(w));
    }
    this.durations = new Set();
    const withReference = referenceYear !== null && referenceYear !== undefined;
    for (const [stated] of this.dates) {
      const sorted = [...stated].sort((a, b) => a - b);
      for (let i = 0; i < sorted.length; i++) {
        for (let j = i + 1; j < sorted.length; j++) {
          for (const d of [-1, 0, 1]) this.durations.add(Math.abs(sorted[i] - sorted[j]) + d);
        }
        if (withReference) for (const d of [-1, 0, 1]) this.durations.add(Math.abs(sorted[i] - referenceYear) + d);
      }
    }
  }

  /** Stated in a sentence sharing a term with the claiming sentence, or the sum or difference
   * of two numbers (not years) that a sentence sharing ARITHMETIC_SHARED terms with it states, or
   * a duration between stated years in a sentence that speaks of durations; without `computed`,
   * only the first. */
  hasNumber(value, claimTerms, computed = true) {
    if (TRIVIAL_NUMBERS.has(value)) return true;
    const sentenceTerms = new Set([...claimTerms].filter((t) => !UNITS.has(t)));
    if ((this.contexts.get(value) || []).some((terms) => shares(terms, sentenceTerms))) return true;
    if (!computed) return false;
    const common = (terms) => [...terms].filter((t) => sentenceTerms.has(t)).length;
    if ((this.arithmetic.get(value) || []).some((terms) => common(terms) >= ARITHMETIC_SHARED)) return true;
    return this.durations.has(value) && shares(DURATION, claimTerms);
  }

  hasWord(word) {
    return this.words.has(fold(word));
  }

  /** The identifier stands verbatim in a clean support sentence (occurs), zero-width characters
   * of both ignored (the readers break control-token shapes in page text with one). */
  hasIdentifier(identifier) {
    const bare = identifier.replace(ZERO_WIDTH, "");
    return this.texts.some((text) => occurs(bare, text));
  }

  /** One clean support sentence states both years of a SPAN match, and its months where the
   * span names them and that sentence names any. */
  statesSpan(span) {
    const start = Number(span[2]);
    const end = Number(span[4]);
    const months = [month(span[1]), month(span[3])].filter((m) => m !== null);
    return this.dates.some(([stated, named]) => stated.has(start) && stated.has(end)
      && (!named.size || months.every((m) => named.has(m))));
  }

  /** The sentence with each capitalised word of CUT_NAME letters or more that the support never
   * uses written whole, where it begins exactly one longer capitalised word that a support
   * sentence writes before the same next word: "Teod Varga" becomes "Teodor Varga". */
  completed(sentence) {
    let out = "";
    let last = 0;
    for (const [word, following, start] of adjacentWords(sentence)) {
      if (length(word) < CUT_NAME || !isUpper(chars(word)[0]) || this.hasWord(word)) continue;
      const cut = fold(word);
      const whole = new Set([...(this.namesBefore.get(fold(following)) || [])]
        .filter((w) => length(w) > length(word) && fold(w).startsWith(cut)));
      if (whole.size === 1) {
        out += sentence.slice(last, start) + [...whole][0];
        last = start + word.length;
      }
    }
    return out + sentence.slice(last);
  }

  /** The terms (of the sentence or one of its clauses) are mostly a planted sentence's, more
   * than any clean one's, and the sentence does not report them as someone else's words: with a
   * reporting word the planted sentence lacks ("told chatbots to say"), or after a reporter it
   * does not name ("The recruiter's message told ..."); only reporting words before `end`, where
   * the echoing clause ends, count. */
  echoesPlanted(sentence, terms, end = sentence.length) {
    if (terms.size < ECHO_MIN_TERMS || !this.planted.length) return false;
    const overlap = (set) => [...terms].filter((t) => set.has(t)).length;
    const shares = this.planted.map(overlap);
    const best = shares.indexOf(Math.max(...shares));
    const clean = Math.max(0, ...this.clean.map(overlap));
    if (shares[best] < ECHO_SHARE * terms.size || shares[best] <= clean) return false;
    for (const match of sentence.matchAll(REPORTED)) {
      if (match.index >= end) break;
      if (!this.plantedWords[best].has(fold(match[0]))) return false;
      const before = contentTerms(this.tokenize(plain(sentence.slice(0, match.index))));
      if (before.some((t) => !IGNORED_NAMES.has(t) && !this.planted[best].has(t))) return false;
    }
    return true;
  }
}

/** The numbers and name-like words of one sentence, in order, as [kind, text] (a leading list
 * number is not a claim). An opening word counts as a name after a colon, in a sentence of at
 * most SHORT words or before another capitalised word, unless it is a stopword (`tokenizeText`
 * drops it). */
export function claims(sentence, tokenizeText) {
  const text = plain(sentence.replace(LIST_MARKER, ""));
  const found = numbers(text)
    .filter(([, value]) => !TRIVIAL_NUMBERS.has(value))
    .map(([written]) => ["number", written]);
  const parts = [];
  for (const match of text.matchAll(WORD)) {
    for (const part of match[0].split("-")) if (part && !isDigit(chars(part)[0])) parts.push([match.index, part]);
  }
  const short = parts.length <= SHORT;
  parts.forEach(([start, part], index) => {
    const opener = pySearch(SENTENCE_OPENERS, text.slice(0, start));
    const followed = index + 1 < parts.length && isUpper(chars(parts[index + 1][1])[0]);
    const capital = isUpper(chars(part)[0]);
    const colon = pySearch(AFTER_COLON, text.slice(0, start));
    if (isName(part, opener) ||
        (opener && (short || followed || colon) && capital && !IGNORED_NAMES.has(fold(part)) && tokenizeText(part).length)) {
      found.push(["name", part]);
    }
  });
  return found;
}

/** The sentence's claims that the support never states. A number's context is the sentence's
 * terms and the question's (`questionTerms`: a short answer like "2019" answers the question it
 * was asked). A denial may name what the question named ("Teo never worked at Google") or what
 * only fiction says; a name the site never uses (`premises`, folded) only where every clause
 * naming it denies. */
export function unsupported(sentence, support, questionWords, questionTerms = new Set(), people = [], premises = new Set()) {
  const negated = isNegated(sentence);
  const termsOf = (text) => new Set(contentTerms(support.tokenize(plain(text))));
  const own = termsOf(sentence);
  const parts = [[sentence, own], ...sentence.split(CLAUSE).map((c) => [c, termsOf(c)])];
  if (parts.some(([part, terms]) => !isNegated(part) && support.echoesPlanted(sentence, terms, sentence.indexOf(part) + part.length))) {
    return [["planted", sentence.trim()]];
  }
  const found = identifiers(sentence);
  const out = found.filter((i) => !support.hasIdentifier(i)).map((i) => ["identifier", i]);
  for (const m of plain(sentence).matchAll(SPAN)) if (!support.statesSpan(m)) out.push(["span", m[0]]);
  sentence = withoutIdentifiers(sentence, found);
  const terms = new Set([...own, ...questionTerms]);
  const text = plain(sentence);
  const personal = pySearch(PERSONAL, text) || [...people].some((t) => own.has(t));
  const ages = personal ? statedAges(text) : new Set();
  const privateWords = personal ? [...text.matchAll(PRIVATE_ALL)].map((m) => m[0]) : [];
  const privateTerms = new Set(contentTerms(support.tokenize(privateWords.join(" "))));
  for (const claim of claims(sentence, support.tokenize)) {
    const [kind, written] = claim;
    const value = kind === "number" ? numbers(written)[0][1] : null;
    let ok;
    if (kind !== "number") ok = support.hasWord(written);
    else if (ages.has(value)) ok = support.ages.has(value);
    else ok = support.hasNumber(value, privateTerms.size ? privateTerms : terms, !privateTerms.size);
    const folded = fold(written);
    if (!ok && negated && (questionWords.has(folded) || support.fictionWords.has(folded))) {
      ok = !premises.has(folded) || deniedWhereverNamed(sentence, folded);
    }
    if (!ok) out.push(claim);
  }
  return out;
}

/** Every clause of the sentence that names the (folded) word is negated. */
function deniedWhereverNamed(sentence, folded) {
  return sentence.split(CLAUSE).every((clause) => !wordsOf(clause).map(fold).includes(folded) || isNegated(clause));
}

// ---- Premises (premises.py) ----

/** The line the answer prompt carries when the question uses words the site never does. */
export function notice(terms) {
  return terms.length ? `The site never mentions: ${terms.join(", ")}.` : "";
}

/** "The site does not mention A or B.", said of premise terms; empty for none. */
export function correction(terms) {
  return terms.length ? `The site does not mention ${terms.join(" or ")}.` : "";
}

// ---- Attribution (attribution.py) ----

export const MIN_SUPPORT = RULES.thresholds.MIN_SUPPORT;
export const MIN_SHARED = RULES.thresholds.MIN_SHARED;
export const NEAR_BEST = RULES.thresholds.NEAR_BEST;
export const KEEP_MARKER = RULES.thresholds.KEEP_MARKER;

/** The site's tokenizer and term weights, as the retrieval index has them. */
export class Lexicon {
  constructor(tokenizeText, idf) {
    this.tokenize = tokenizeText;
    this.idf = idf;
  }

  /** A lexicon over a BM25 index of the site's passages (retrieval.js). */
  static of(bm25, stopwords) {
    return new Lexicon((text) => tokenize(text, stopwords), (term) => bm25Idf(bm25.size, bm25.df(term)));
  }
}

/** [IDF-weighted share of the sentence's distinct terms held by the passage, shared count]. */
export function support(sentenceTerms, passageTerms, lexicon) {
  const distinct = [...new Set(sentenceTerms)];
  let total = 0;
  for (const t of distinct) total += lexicon.idf(t);
  const shared = distinct.filter((t) => passageTerms.has(t));
  if (total === 0) return [0, 0];
  let held = 0;
  for (const t of shared) held += lexicon.idf(t);
  return [held / total, shared.length];
}

/** A sentence with fewer distinct terms ("4", "Berlin, Germany") answers its question: the
 * question's terms join its own for attribution. */
const TERSE = RULES.thresholds.TERSE;

const PREAMBLE = compiled("PREAMBLE");

/** The sentence's terms, its PREAMBLE (words about where it read something) left out. */
function attributedTerms(sentence, lexicon) {
  const text = plain(sentence);
  const m = pyExec(PREAMBLE, text);
  return lexicon.tokenize(m ? text.slice(m[0].length) : text);
}

/** 1-based numbers of the passages a sentence draws on, best first (empty if none). */
export function attribute(sentence, passages, lexicon, questionTerms = []) {
  let terms = attributedTerms(sentence, lexicon);
  if (new Set(terms).size < TERSE) terms = [...terms, ...questionTerms];
  const scored = [];
  passages.forEach((passageTerms, i) => {
    const [share, count] = support(terms, passageTerms, lexicon);
    if (share >= MIN_SUPPORT && count >= MIN_SHARED) scored.push([share, i + 1]);
  });
  if (!scored.length) return [];
  const best = Math.max(...scored.map(([share]) => share));
  scored.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  return scored.filter(([share]) => share >= NEAR_BEST * best).map(([, n]) => n);
}

function markersOf(text) {
  return [...text.matchAll(CITATION)].map((m) => Number(asciiDigits(m[1])));
}

/** The sentence's own [n] markers that point at a passage holding its words. */
export function validMarkers(sentence, passages, lexicon) {
  const terms = attributedTerms(sentence, lexicon);
  const kept = [];
  for (const n of markersOf(sentence)) {
    if (n >= 1 && n <= passages.length && !kept.includes(n) && support(terms, passages[n - 1], lexicon)[0] >= KEEP_MARKER) {
      kept.push(n);
    }
  }
  return kept;
}

// ---- Yes answers (affirmation.py) ----

const POLAR = compiled("POLAR");
const AFFIRMATIVE = compiled("AFFIRMATIVE");
const DENYING = compiled("DENYING");
const LASTING = compiled("LASTING");
const LASTING_ALL = pyRegex(PYTHON_PATTERNS.LASTING[0], { ignoreCase: true, global: true });
const ENDED = compiled("ENDED");
const ONGOING = compiled("ONGOING");
/** Put in a window's terms when its text says something lasts (no tokenizer makes it). */
const ONGOING_TERM = "\u2192ongoing";
/** Put in a window's terms when its text says something ended (ENDED). */
const ENDED_TERM = "\u2192ended";
const NEAR = RULES.thresholds.NEAR;
const EXACT_ONLY = RULES.thresholds.EXACT_ONLY;
const SPARE_EVERY = RULES.thresholds.SPARE_EVERY;
const PAIRED = RULES.thresholds.PAIRED;
const IRREGULAR = new Map(Object.entries(RULES.words.IRREGULAR));

/** A term with an irregular verb form read as its base form. */
function base(term) {
  return IRREGULAR.get(term) ?? term;
}

function baseTerms(tokenizeText, text) {
  return new Set(tokenizeText(text).map(base));
}

/** The terms, in order and once each, less the site's own name's. */
function withoutSite(terms, siteTerms) {
  const own = new Set([...siteTerms].map(base));
  return [...new Set(terms)].filter((t) => !own.has(t));
}

/** The terms a yes must find together: those of a yes/no question's first clause after its
 * auxiliary verb, in base form, less the terms of the site's own name; empty when the question
 * is not a yes/no question. */
export function askedTerms(question, tokenizeText, siteTerms = []) {
  const polar = pyExec(POLAR, question);
  if (polar === null) return [];
  const clause = question.slice(polar.index + polar[0].length).split(CLAUSE)[0];
  return withoutSite(baseTerms(tokenizeText, plain(clause)), siteTerms);
}

/** The terms, in base form, of the question's names (capitalised words after the first, words
 * with inner capitals) and of its words with digits: a window may never lack one. */
export function namedTerms(question, tokenizeText) {
  const out = new Set();
  wordsOf(plain(question)).forEach((w, i) => {
    if (chars(w).some(isDigit) || (i > 0 && isName(w, false))) for (const t of tokenizeText(w)) out.add(base(t));
  });
  return out;
}

/** The window has the term or, for a term longer than EXACT_ONLY letters, a term starting with
 * its stem (its first max(STEM, length - 3) letters). */
export function holds(term, window) {
  if (window.has(term)) return true;
  const letters = chars(term);
  if (letters.length <= EXACT_ONLY) return false;
  const stem = letters.slice(0, Math.max(STEM, letters.length - 3)).join("");
  for (const w of window) if (w.startsWith(stem)) return true;
  return false;
}

/** The window holds every one of the terms. */
function holdsAll(terms, window) {
  return terms.every((t) => holds(t, window));
}

/** The window holds every asked term but at most one plain word in SPARE_EVERY. */
function confirms(window, terms, named) {
  const missing = terms.filter((t) => !holds(t, window));
  return missing.length <= Math.floor(terms.length / SPARE_EVERY) && !missing.some((t) => named.has(t));
}

/** The term sets that may confirm a yes and those that may deny it. Each sentence of a
 * non-fiction passage or of the stable facts that was not planted makes a window with up to near
 * such sentences either side on its line (a paragraph; list items and table rows stand alone;
 * with acrossLines, in its evidence passage: documentation writes the code line under the
 * sentence that explains it) and its passage's label (unless labels is false), and
 * ONGOING_TERM when one of its sentences says something lasts (ENDED_TERM when one says
 * something ended); each of its clauses that says not, never or n't may deny it. */
function windows(evidence, facts, tokenizeText, near = NEAR, labels = true, acrossLines = false) {
  const found = [];
  const denied = [];
  const texts = [
    ...evidence.filter((p) => !p.fiction).map((p) => [p.label, p.text, acrossLines]),
    ["", facts, false],
  ];
  for (const [label, text, spans] of texts) {
    const head = labels ? baseTerms(tokenizeText, label) : new Set();
    for (const run of spans ? [text] : text.split("\n")) {
      const own = [];
      for (const [sentence, isPlanted] of planted(run)) {
        if (isPlanted) continue;
        const terms = baseTerms(tokenizeText, plain(sentence.text));
        if (pySearch(ONGOING, sentence.text)) terms.add(ONGOING_TERM);
        if (pySearch(ENDED, sentence.text)) terms.add(ENDED_TERM);
        own.push(terms);
        for (const clause of sentence.text.split(CLAUSE)) {
          if (pySearch(DENYING, clause)) denied.push(baseTerms(tokenizeText, plain(clause)));
        }
      }
      own.forEach((_, i) => {
        const window = new Set(head);
        for (const set of own.slice(Math.max(0, i - near), i + near + 1)) for (const t of set) window.add(t);
        found.push(window);
      });
    }
  }
  return [found, denied];
}

/** The answer's first sentence when it says yes: it opens with a yes, or it is not negated
 * and restates every asked term (at least two). */
function affirming(answer, terms, tokenizeText) {
  const first = sentences(answer)[0];
  if (first === undefined || !terms.length) return null;
  if (pySearch(AFFIRMATIVE, first.text)) return first.text;
  const own = baseTerms(tokenizeText, plain(first.text));
  if (terms.length >= 2 && !isNegated(first.text) && holdsAll(terms, own)) return first.text;
  return null;
}

/** The sentence in which an answer says yes to a yes/no question that a denying clause holds
 * every asked term of, or that no window confirms; null when the answer does not say yes or a
 * window confirms it. A question asking whether something lasts (LASTING) needs a window that
 * says it does (ONGOING) instead of the words "still" ... */
export function unconfirmedYes(answer, question, evidence, facts, tokenizeText, siteTerms = []) {
  const terms = askedTerms(question, tokenizeText, siteTerms);
  const said = affirming(answer, terms, tokenizeText);
  if (said === null) return null;
  const lasting = [...question.matchAll(LASTING_ALL)].map((m) => m[0]);
  const lastingTerms = new Set(lasting.flatMap((w) => tokenizeText(w).map(base)));
  const needed = terms.filter((t) => !lastingTerms.has(t));
  const named = namedTerms(question, tokenizeText);
  const [found, denied] = windows(evidence, facts, tokenizeText);
  if (denied.some((d) => holdsAll(needed, d))) return said;
  const ongoing = lasting.length ? [ONGOING_TERM] : [];
  return found.some((w) => confirms(w, needed, named) && holdsAll(ongoing, w)) ? null : said;
}

/** The answer's first sentence that holds every one of `names` with no negated clause holding
 * any of them ("Teo left Fennec Systems in 2025 because he was not happy" restates its names). */
function echoing(answer, names, tokenizeText) {
  for (const sentence of sentences(answer)) {
    if (!holdsAll(names, baseTerms(tokenizeText, plain(sentence.text)))) continue;
    const negated = sentence.text.split(CLAUSE).filter(isNegated).map((c) => baseTerms(tokenizeText, plain(c)));
    if (!negated.some((clause) => names.some((name) => holds(name, clause)))) return sentence.text;
  }
  return null;
}

/** The named terms of a question that is not yes/no, less the site's own name's, when there are
 * at least PAIRED of them; empty otherwise. */
export function premiseNames(question, tokenizeText, siteTerms = []) {
  if (pySearch(POLAR, question)) return [];
  const names = withoutSite([...namedTerms(question, tokenizeText)].sort(), siteTerms);
  return names.length >= PAIRED ? names : [];
}

/** For a question that is not yes/no, with at least PAIRED named terms besides the site's own
 * name's: the answer's sentence that restates them all while no window holds them all (its
 * window spanning the lines of an evidence passage), or, for
 * a question presuming something ended, while a sentence holding the names it presumes ended
 * (endedNames) says it lasts and not that anything ended; null otherwise. */
export function unconfirmedPremise(answer, question, evidence, facts, tokenizeText, siteTerms = []) {
  const names = premiseNames(question, tokenizeText, siteTerms);
  const said = names.length ? echoing(answer, names, tokenizeText) : null;
  if (said === null) return null;
  const [found] = windows(evidence, facts, tokenizeText, NEAR, true, true);
  if (!found.some((w) => holdsAll(names, w))) return said;
  const things = endedNames(question, names, tokenizeText);
  if (!things.length) return null;
  const [lasting] = windows(evidence, facts, tokenizeText, 0, false);
  return lasting.some((w) => w.has(ONGOING_TERM) && !w.has(ENDED_TERM) && holdsAll(things, w)) ? said : null;
}

/** The names without digits that a question presumes ended: those in the words after its first
 * ENDED match up to the end of that clause; empty without a match. */
function endedNames(question, names, tokenizeText) {
  const ended = pyExec(ENDED, question);
  if (!ended) return [];
  const span = baseTerms(tokenizeText, plain(question.slice(ended.index + ended[0].length).split(CLAUSE)[0]));
  return names.filter((t) => span.has(t) && !chars(t).some(isDigit));
}

/** Each check with the kind of claim it reports, in the order grounding runs them. */
const CHECKS = [["affirmation", unconfirmedYes], ["premise", unconfirmedPremise]];

// ---- Grounding an answer (answer.py) ----

/** The opening of an answer whose every claim failed the check. */
export const UNSUPPORTED = RULES.texts.UNSUPPORTED;
const QUOTE_MIN_WORDS = RULES.thresholds.QUOTE_MIN_WORDS;

/** An evidence passage as grounding reads it: label and text, and its source's fiction flag. */
export function whole(passage) {
  return `${passage.label}\n${passage.text}`;
}

/**
 * Check a finished answer against its evidence and the stable facts.
 * @param {string} answer the model's text
 * @param {{evidence: Array<{label: string, text: string, fiction: boolean}>, support: Support,
 *          question: string, lexicon: Lexicon, premiseTerms?: string[],
 *          factPassages?: Array<{label: string, text: string, url: string}>}} context evidence
 *          numbered from 1; premiseTerms: the question's names the site never uses;
 *          factPassages: the structured facts' passages, cited for a sentence only they hold
 * @param {boolean} checkClaims false: only repeats are dropped and citations attributed
 * @returns {{text: string, cited: number[], changed: boolean, grounded: boolean,
 *            removed: Array<[string, string]>, factCited: number[], declined: string|null}}
 *          declined: "unsupported" (replaced: nothing it claimed held), "model" (every
 *          sentence declines) or null; a declined answer is a refusal
 */
export function ground(answer, context, checkClaims = true) {
  for (const [kind, check] of checkClaims ? CHECKS : []) {
    const said = check(answer, context.question, context.evidence, context.facts ?? "",
      context.lexicon.tokenize, context.siteTerms ?? []);
    if (said !== null) return replacement(context, [[kind, said]]);
  }
  const passages = context.evidence.map((p) => new Set(context.lexicon.tokenize(whole(p))));
  const questionWords = new Set(wordsOf(context.question).map(fold));
  const askedTerms = context.lexicon.tokenize(context.question);
  const questionTerms = new Set(contentTerms(askedTerms));
  const premises = new Set((context.premiseTerms || []).map(fold));
  const kept = [];
  const removed = [];
  const seen = new Set();
  let dropped = false;
  let rewritten = false;
  const split = sentences(answer);
  for (let sentence of split) {
    const key = splitSpace(plain(sentence.text).toLowerCase()).join(" ");
    if (seen.has(key) || (split.length > 1 && isMeta(sentence.text))) {
      dropped = true;
      continue;
    }
    seen.add(key);
    const citedAs = citePhrasesAsMarkers(sentence.text);
    if (citedAs !== sentence.text) {
      sentence = { ...sentence, text: citedAs };
      rewritten = true;
    }
    if (hasStandIn(sentence.text)) {
      removed.push(["stand-in", sentence.text]);
      dropped = true;
      continue;
    }
    const completed = checkClaims ? context.support.completed(sentence.text) : sentence.text;
    if (completed !== sentence.text) {
      sentence = { ...sentence, text: completed };
      rewritten = true;
    }
    const bad = checkClaims ? unsupported(sentence.text, context.support, questionWords, questionTerms, context.siteTerms || [], premises) : [];
    if (bad.length) {
      removed.push(...bad);
      dropped = true;
      continue;
    }
    kept.push(sentence);
  }
  if (removed.length && !kept.some((s) => attribute(s.text, passages, context.lexicon).length)) {
    return replacement(context, removed);
  }
  const cited = [];
  const factCited = [];
  let factTerms = null;
  const pieces = [];
  for (const sentence of kept) {
    const own = markersOf(sentence.text);
    const valid = validMarkers(sentence.text, passages, context.lexicon);
    const found = [...valid];
    for (const n of attribute(sentence.text, passages, context.lexicon, askedTerms)) if (!found.includes(n)) found.push(n);
    let text = sentence.text;
    if (own.length && !sameList(own, valid)) {
      text = remark(text, found);
      rewritten = true;
    }
    pieces.push(text);
    for (const n of found) if (!cited.includes(n)) cited.push(n);
    if (!found.length && !isNegated(sentence.text)) {
      factTerms ??= (context.factPassages || []).map((p) => new Set(context.lexicon.tokenize(whole(p))));
      for (const n of attribute(sentence.text, factTerms, context.lexicon, askedTerms).slice(0, 1)) {
        if (!factCited.includes(n)) factCited.push(n);
      }
    }
  }
  if (checkClaims && !cited.length) {
    const facts = new Set(context.lexicon.tokenize(context.facts ?? ""));
    const unattributed = kept.filter((s) => asserts(s.text, askedTerms, facts, context.lexicon))
      .map((s) => ["unattributed", strip(s.text)]);
    if (unattributed.length) return replacement(context, [...removed, ...unattributed]);
  }
  let text = dropped || rewritten ? join(answer, kept, pieces) : answer;
  const correction = premiseCorrection(context, text);
  if (correction) text = strip(`${correction} ${text}`);
  const declines = kept.length > 0 && kept.every((s) => isDecline(s.text));
  const near = declines ? declineNote(context, askedTerms) : null;
  if (near !== null) {
    text = `${text} ${near.text}`;
    if (!cited.includes(near.n)) cited.push(near.n);
  }
  const declined = declines ? "model" : null;
  if (!dropped && !rewritten && !correction && near === null) {
    return { text: answer, cited, changed: false, grounded: true, removed: [], factCited, declined };
  }
  return { text, cited, changed: true, grounded: !removed.length, removed, factCited, declined };
}

/** The sentence states something of its own that the stable facts (their terms) do not hold
 * either: it is not negated, holds a term that is neither the question's nor a bare reply word
 * (yes, sure, ...), and is not attributed to the facts as to a passage. */
function asserts(sentence, askedTerms, facts, lexicon) {
  if (isNegated(sentence)) return false;
  const asked = new Set([...askedTerms, ...IGNORED_NAMES]);
  return lexicon.tokenize(plain(sentence)).some((t) => !asked.has(t))
    && !attribute(sentence, [facts], lexicon, askedTerms).length;
}

/** "The site does not mention A or B." for the question's premise terms that the answer does
 * not deny (no negated sentence of it names them); empty when there are none. */
function premiseCorrection(context, answer) {
  const denied = new Set();
  for (const s of sentences(answer)) if (isNegated(s.text)) for (const w of wordsOf(s.text)) denied.add(fold(w));
  return correction((context.premiseTerms || []).filter((t) => !denied.has(fold(t))));
}

function sameList(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function remark(text, numbersToCite) {
  const bare = rstrip(text.replace(ANSWER_MARKERS, ""));
  const marks = numbersToCite.map((n) => ` [${n}]`).join("");
  const last = bare.slice(-1);
  if (bare && ".!?".includes(last)) return bare.slice(0, -1) + marks + last;
  return bare + marks;
}

function join(answer, kept, pieces) {
  let out = "";
  let previousEnd = null;
  kept.forEach((sentence, i) => {
    if (previousEnd !== null) out += answer.slice(previousEnd, sentence.start).includes("\n") ? "\n" : " ";
    out += pieces[i];
    previousEnd = sentence.end;
  });
  return strip(out);
}

/** The premise correction or UNSUPPORTED, then what the evidence nearest the question says
 * (nearest), cited. */
function replacement(context, removed) {
  const opening = premiseCorrection(context, "") || UNSUPPORTED;
  const near = nearest(context);
  const declined = "unsupported";
  if (near === null) return { text: opening, cited: [], changed: true, grounded: false, removed, factCited: [], declined };
  return { text: `${opening} ${near.text}`, cited: [near.n], changed: true, grounded: false, removed, factCited: [], declined };
}

/** A declining answer is followed by the closest evidence sentence, and fiction is named, only
 * when the sentence shares at least this many of the question's terms, holding this share of
 * their IDF weight (declineNote). */
const RELEVANT_SHARED = RULES.thresholds.RELEVANT_SHARED;
const RELEVANT_SHARE = RULES.thresholds.RELEVANT_SHARE;
/** Said, with the fiction's marker, when a fiction sentence is nearer the question than any
 * other (fiction is never quoted). */
const FICTION_NOTE = RULES.texts.FICTION_NOTE;

/** The nearest note that follows an answer that only declines: one meeting the relevance
 * thresholds, or any when the question names the site (a term of its name) and something it
 * never mentions (a premise term): the decline denies a false premise about the site. */
function declineNote(context, askedTerms) {
  const siteTerms = new Set(context.siteTerms ?? []);
  const aboutSite = askedTerms.some((t) => siteTerms.has(t));
  if ((context.premiseTerms || []).length && aboutSite) return nearest(context);
  return nearest(context, RELEVANT_SHARED, RELEVANT_SHARE);
}

/** What to add after an answer that cannot stand ({text, n}: n the passage it cites): the
 * closest sentence, or FICTION_NOTE when a fiction sentence holds more of the question (and
 * the relevance thresholds) than any other; null for neither. */
function nearest(context, minShared = 1, minShare = 0) {
  const asked = quoteTerms(context);
  const fact = closest(context, asked, minShared, minShare, false);
  const story = closest(context, asked, RELEVANT_SHARED, RELEVANT_SHARE, true);
  if (story !== null && (fact === null || story.shared > fact.shared)) {
    const label = FICTION_NOTE.replace("{}", context.evidence[story.n - 1].label);
    return { text: `${label} [${story.n}]`, n: story.n };
  }
  if (fact === null) return null;
  return { text: `The closest it comes: ${fact.text} [${fact.n}]`, n: fact.n };
}

/** The question's terms a quote is scored on (those the evidence holds in some inflection, the
 * site's name left out; each mapped to its inflection key), their IDF weight, and whether a sentence saying what lasts comes first (a question
 * asking whether something lasts or presuming it ended). */
function quoteTerms(context) {
  const site = new Set(context.siteTerms || []);
  const held = new Set(context.evidence.flatMap((p) => context.lexicon.tokenize(whole(p)).map(inflectionKey)));
  const terms = new Map();
  for (const t of context.lexicon.tokenize(context.question)) {
    const key = inflectionKey(t);
    if (held.has(key) && !site.has(t)) terms.set(t, key);
  }
  let weight = 0;
  for (const t of terms.keys()) weight += context.lexicon.idf(t);
  const ongoingFirst = Boolean(pySearch(LASTING, context.question)) || Boolean(pySearch(ENDED, context.question));
  return { terms, weight, ongoingFirst };
}

/** The sentence ({n, text, shared}) of a non-fiction evidence text (fiction: of a fiction
 * text; planted text never counts) sharing the most of the asked terms (quoteTerms), or null
 * when none shares minShared of them holding minShare of their IDF weight; a sentence saying
 * what lasts comes first when the question calls for it. */
function closest(context, { terms: questionTerms, weight, ongoingFirst }, minShared, minShare, fiction) {
  let best = null;
  context.evidence.forEach((passage, i) => {
    if (Boolean(passage.fiction) !== fiction) return;
    const label = new Set(context.lexicon.tokenize(passage.label).map(inflectionKey));
    for (const [sentence, isPlanted] of planted(passage.text)) {
      if (splitSpace(sentence.text).length < QUOTE_MIN_WORDS || isPlanted) continue;
      const own = new Set(context.lexicon.tokenize(sentence.text).map(inflectionKey));
      let shared = 0;
      let sharedWeight = 0;
      let read = 0;
      for (const [t, key] of questionTerms) {
        if (own.has(key) || label.has(key)) read += 1;
        if (!own.has(key)) continue;
        shared += 1;
        sharedWeight += context.lexicon.idf(t);
      }
      const share = weight ? sharedWeight / weight : 0;
      const ongoing = ongoingFirst && Boolean(pySearch(ONGOING, sentence.text));
      if (!shared || (!ongoing && (shared < minShared || share < minShare))) continue;
      const better = best === null || ongoing > best.ongoing || (ongoing === best.ongoing && read > best.read);
      if (better) best = { ongoing, read, shared, n: i + 1, text: sentence.text };
    }
  });
  return best === null ? null : { n: best.n, text: best.text, shared: best.shared };
}

// ---- One site (site.py) ----

/** The non-fiction passages of an artifact's ontology sources, as grounding reads them. */
export function factPassagesOf({ sources, passages }) {
  const byId = new Map(sources.map((s) => [s.id, s]));
  return passages.map((p) => [p, byId.get(p.source)])
    .filter(([, s]) => s.kind === "ontology" && s.authority !== "fiction")
    .map(([p, s]) => ({ label: headingLabel(s.title, p.heading), text: p.text, url: p.url }));
}

/** The grounding steps bound to one artifact: premise notices before generation, the claim
 * check and attribution after it. */
export class SiteGrounding {
  /**
   * @param {{lexicon: Lexicon, vocabulary: Iterable<string>, stopwords: Iterable<string>,
   *          facts: string, referenceYear: number|null}} site
   */
  constructor({ lexicon, vocabulary, stopwords, facts, referenceYear, siteName = "", factPassages = [] }) {
    this.lexicon = lexicon;
    /** The passages of the structured facts the system prompt's facts are written from
     * ({label, text, url}): a sentence only they hold is cited to one of them. */
    this.factPassages = factPassages;
    this.siteTerms = lexicon.tokenize(siteName);
    this.vocabulary = vocabulary;
    this.stopwords = stopwords;
    this.facts = facts;
    this.referenceYear = referenceYear;
    this.words = null;
  }

  /** The grounding of a loaded retrieval Index (retrieval.js). */
  static fromIndex(index) {
    const { prompt, built_at: built = "", site } = index.artifact;
    const year = String(built).slice(0, 4);
    return new SiteGrounding({
      lexicon: Lexicon.of(index.bm25, index.stopwords),
      vocabulary: [...index.bm25.postings.keys()],
      stopwords: index.stopwords,
      // The worked examples are about a made-up subject: never support for a claim.
      facts: String(prompt.system).replace(String(prompt.examples ?? ""), ""),
      referenceYear: /^[0-9]{4}$/.test(year) ? Number(year) : null,
      siteName: String(site?.name ?? ""),
      factPassages: factPassagesOf(index.artifact),
    });
  }

  /** The site's vocabulary with its stems, built on first use. */
  siteWords() {
    this.words ||= new SiteWords(this.vocabulary, this.stopwords);
    return this.words;
  }

  /** "The site never mentions: ..." for the question's names the site never uses, or "". */
  premiseNotice(question) {
    return notice(this.siteWords().unknownTerms(question));
  }

  /** The gate's `refusal`, opened by what the question names that the site never does ("The
   * site does not mention Spotify."): the visitor learns why, a false premise is corrected. */
  refusal(question, refusal) {
    return strip(`${correction(this.siteWords().unknownTerms(question))} ${refusal}`);
  }

  /** Check an answer against `evidence` ({label, text, fiction} per passage, numbered from 1)
   * and the stable facts of the system prompt. Without `checkClaims` no sentence is removed;
   * without `premises` no premise correction is added. */
  ground(answer, question, evidence, { checkClaims = true, premises = true } = {}) {
    const texts = (fiction) => evidence.filter((p) => Boolean(p.fiction) === fiction).map(whole);
    const support = new Support([...texts(false), this.facts], this.lexicon.tokenize, this.referenceYear, texts(true));
    const premiseTerms = premises ? this.siteWords().unknownTerms(question) : [];
    const context = {
      evidence, support, question, lexicon: this.lexicon, premiseTerms, facts: this.facts, siteTerms: this.siteTerms,
      factPassages: this.factPassages,
    };
    return ground(answer, context, checkClaims);
  }
}

/** The tunables and word lists, for the shared vectors to compare with Python's. */
export const CONSTANTS = {
  MIN_SUPPORT, MIN_SHARED, NEAR_BEST, KEEP_MARKER, TERSE, STEM, SHORT, QUOTE_MIN_WORDS, UNSUPPORTED,
  RELEVANT_SHARED, RELEVANT_SHARE, FICTION_NOTE,
  NEAR, EXACT_ONLY, SPARE_EVERY, PAIRED, IRREGULAR: Object.fromEntries(IRREGULAR),
  NUMBER_WORDS: Object.fromEntries(NUMBER_WORDS),
  IGNORED_NAMES: [...IGNORED_NAMES].sort(),
  TRIVIAL_NUMBERS: [...TRIVIAL_NUMBERS].sort(),
  DURATION: [...DURATION].sort(),
  UNITS: [...UNITS].sort(),
  YEARS: [FIRST_YEAR, LAST_YEAR],
  ECHO_SHARE,
  ECHO_MIN_TERMS,
  ARITHMETIC_SHARED,
};
