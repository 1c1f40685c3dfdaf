// The JavaScript twin of site_knowledge/retrieval/words.py: which names of a question the
// whole site never uses. Ranking leaves them out (search-worker.js); grounding.js names them.

import { foldPlural } from "./retrieval.js";
import { chars, isAlpha, isCombining, isDigit, isUpper, pyRegex, splitSpace } from "./pystr.js";

/** A word as grounding reads it, as [Python source, re.IGNORECASE] (words.py's WORD). */
export const WORD_PATTERN = [String.raw`[^\W_]+(?:['’][^\W_]+)*`, false];
export const WORD = pyRegex(WORD_PATTERN[0], { global: true });
/** Capitalised words that are never names. */
export const IGNORED_NAMES = new Set(["i", "i'm", "i've", "i'd", "i'll", "yes", "no", "yeah", "sure", "ok",
  "okay", "correct", "indeed", "note", "none", "nothing", "unknown"]);
/** A word counts as used when a site word shares its first max(STEM, length - 3) letters. */
export const STEM = 4;

/** A word as claims compare it: lower case without diacritics (NFKD, combining marks dropped,
 * then NFKC), no possessive, plural folded. */
export function fold(word) {
  const bare = chars(word.normalize("NFKD")).filter((c) => !isCombining(c)).join("");
  let w = bare.normalize("NFKC").toLowerCase().replaceAll("’", "'");
  if (w.endsWith("'s")) w = w.slice(0, -2);
  return foldPlural(w);
}

/** Capitalised words not opening a sentence, and any word with capitals after its first
 * letter (PhD, PWNED, iOS). */
export function isName(word, opener) {
  if (IGNORED_NAMES.has(fold(word))) return false;
  const letters = chars(word);
  const innerCapital = letters.slice(1).some(isUpper);
  if (innerCapital && letters.filter(isAlpha).length >= 2) return true;
  return isUpper(letters[0]) && !opener;
}

/** The site's vocabulary (tokenizer terms, folded as claims fold words) with every stem prefix,
 * built once. */
export class SiteWords {
  constructor(vocabulary, stopwords) {
    this.stopwords = new Set(stopwords);
    this.prefixes = new Set();
    for (const term of new Set([...vocabulary].map(fold))) {
      const letters = chars(term);
      this.prefixes.add(term);
      for (let n = STEM; n <= letters.length; n++) this.prefixes.add(letters.slice(0, n).join(""));
    }
  }

  /** The site uses the word or a word of the same stem. */
  uses(word) {
    const folded = chars(fold(word));
    const stem = folded.slice(0, Math.max(STEM, folded.length - 3)).join("");
    return this.prefixes.has(stem) || this.prefixes.has(folded.join(""));
  }

  /** Names in the question (capitalised after the first word, or with inner capitals) that the
   * site never uses, as the visitor wrote them; common words are left out. */
  unknownTerms(question) {
    const out = [];
    let index = 0;
    for (const [word] of question.matchAll(WORD)) {
      const opener = index === 0;
      index += 1;
      if (!isName(word, opener) || this.stopwords.has(fold(word)) || chars(word).some(isDigit) || this.uses(word)) {
        continue;
      }
      if (!out.includes(word)) out.push(word);
    }
    return out;
  }

  /** The question less its `unknownTerms`, spaces collapsed: what ranking reads (SPEC.md,
   * "Premise names"). */
  withoutUnknown(question) {
    const unknown = new Set(this.unknownTerms(question));
    if (!unknown.size) return question;
    return splitSpace(question.replace(WORD, (word) => (unknown.has(word) ? "" : word))).join(" ");
  }
}
