// The JavaScript grounding (site_knowledge/browser/grounding.js) against the shared vectors
// that Python wrote (tests/data/grounding_vectors.json, scripts/make_grounding_vectors.py):
// the same patterns, character classes, constants, and the same answer for every case.
// Run by tests/test_browser_grounding.py (node --test).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  CONSTANTS,
  Lexicon,
  PYTHON_PATTERNS,
  SiteGrounding,
  Support,
  askedTerms,
  attribute,
  claims,
  ground,
  inflectionKey,
  holds,
  isInjection,
  isDecline,
  isNegated,
  namedTerms,
  notice,
  correction,
  numbers,
  plain,
  sentences,
  support,
  unconfirmedPremise,
  unconfirmedYes,
  unsupported,
  validMarkers,
  whole,
} from "../../site_knowledge/browser/grounding.js";
import { asciiDigits, isCombining, isDigit, isSpace, isUpper, length, pyRegex, pySearch } from "../../site_knowledge/browser/pystr.js";
import { BM25, indexedText, tokenize } from "../../site_knowledge/browser/retrieval.js";
import { SiteWords, fold } from "../../site_knowledge/browser/words.js";

const DATA = join(dirname(fileURLToPath(import.meta.url)), "..", "data");
const V = JSON.parse(readFileSync(join(DATA, "grounding_vectors.json"), "utf8"));
const C = V.corpus;
const stopwords = new Set(C.stopwords);
const bm25 = new BM25(
  C.passages.map((p) => tokenize(indexedText(p, { title: p.title }), stopwords)),
  C.k1,
  C.b,
);
const lexicon = Lexicon.of(bm25, stopwords);
const siteWords = new SiteWords(bm25.postings.keys(), stopwords);
const site = new SiteGrounding({
  lexicon,
  vocabulary: bm25.postings.keys(),
  stopwords,
  facts: C.facts,
  referenceYear: C.reference_year,
  siteName: C.site_name,
  factPassages: C.fact_passages,
});
const siteTerms = lexicon.tokenize(C.site_name);
const texts = (fiction) => C.evidence.filter((p) => p.fiction === fiction).map(whole);
const fullSupport = new Support([...texts(false), C.facts], lexicon.tokenize, C.reference_year, texts(true));
const passageTerms = C.evidence.map((e) => new Set(lexicon.tokenize(whole(e))));
const show = (s) => JSON.stringify(s).slice(0, 90);

/** Code points of "41-5a,61-7a,aa" (inclusive runs in hex). */
function* codePoints(ranges) {
  for (const run of ranges.split(",")) {
    const [first, last = first] = run.split("-").map((h) => parseInt(h, 16));
    for (let c = first; c <= last; c++) if (c < 0xd800 || c > 0xdfff) yield c;
  }
}

function inRanges(ranges) {
  const set = new Set();
  for (const c of codePoints(ranges)) set.add(c);
  return set;
}

test(`character classes match Python's on every character of Unicode ${V.unicode.version}`, () => {
  const U = V.unicode;
  const classes = {
    word: inRanges(U.word), space: inRanges(U.space), upper: inRanges(U.upper), digit: inRanges(U.digit),
    combining: inRanges(U.combining),
  };
  const word = pyRegex(String.raw`^\w$`);
  const asciiLetter = pyRegex("[a-z]", { ignoreCase: true });
  const wrong = { word: [], space: [], upper: [], digit: [], combining: [], caseless: [] };
  for (const c of codePoints(U.assigned)) {
    const ch = String.fromCodePoint(c);
    if (word.test(ch) !== classes.word.has(c)) wrong.word.push(c);
    if (isSpace(ch) !== classes.space.has(c)) wrong.space.push(c);
    if (isUpper(ch) !== classes.upper.has(c)) wrong.upper.push(c);
    if (isDigit(ch) !== classes.digit.has(c)) wrong.digit.push(c);
    if (ch.normalize("NFD") === ch && isCombining(ch) !== classes.combining.has(c)) wrong.combining.push(c);
    if (c > 127 && pySearch(asciiLetter, ch) !== ch in U.caseless_ascii) wrong.caseless.push(c);
  }
  for (const [ch, letters] of Object.entries(U.caseless_ascii)) {
    for (const letter of letters) assert.ok(pySearch(pyRegex(letter, { ignoreCase: true }), ch), `${ch} ~ ${letter}`);
  }
  assert.deepEqual(wrong, { word: [], space: [], upper: [], digit: [], combining: [], caseless: [] });
  assert.equal(asciiDigits(U.decimal), U.decimal_values);
});

test("every pattern is Python's, verbatim", () => {
  const python = Object.fromEntries(Object.entries(V.patterns).map(([name, p]) => [name, [p.source, p.ignorecase]]));
  assert.deepEqual(PYTHON_PATTERNS, python);
});

test("constants are Python's", () => {
  assert.deepEqual(CONSTANTS, V.constants);
});

for (const c of V.sentences) {
  test(`sentences ${show(c.answer)}`, () => {
    const got = sentences(c.answer).map((s) => [
      s.text,
      length(c.answer.slice(0, s.start)),
      length(c.answer.slice(0, s.end)),
    ]);
    assert.deepEqual(got, c.sentences);
  });
}

for (const c of V.tokens) test(`tokens ${show(c.text)}`, () => assert.deepEqual(lexicon.tokenize(c.text), c.tokens));
for (const c of V.plain) test(`plain ${show(c.text)}`, () => assert.equal(plain(c.text), c.plain));
for (const c of V.fold) test(`fold ${show(c.word)}`, () => assert.equal(fold(c.word), c.fold));
for (const c of V.inflection) {
  test(`inflection key ${show(c.term)}`, () => assert.equal(inflectionKey(c.term), c.key));
}
for (const c of V.numbers) test(`numbers ${show(c.text)}`, () => assert.deepEqual(numbers(c.text), c.numbers));
for (const c of V.negation) test(`negation ${show(c.text)}`, () => assert.equal(isNegated(c.text), c.negated));
for (const c of V.decline) test(`decline ${show(c.text)}`, () => assert.equal(isDecline(c.text), c.declines));
for (const c of V.injection) test(`injection ${show(c.text)}`, () => assert.equal(isInjection(c.text), c.injection));
for (const c of V.claims) test(`claims ${show(c.sentence)}`, () => assert.deepEqual(claims(c.sentence, lexicon.tokenize), c.claims));

test("support: words, numbers and durations", () => {
  assert.deepEqual([...fullSupport.words].sort(), V.support.words.slice().sort());
  assert.deepEqual([...fullSupport.contexts.keys()].sort((a, b) => a - b), V.support.numbers);
  assert.deepEqual([...fullSupport.durations].sort((a, b) => a - b), V.support.durations);
  assert.deepEqual([...fullSupport.fictionWords].sort(), V.support.fiction_words.slice().sort());
  assert.deepEqual(fullSupport.planted.map((terms) => [...terms].sort()).sort(), V.support.planted);
});

for (const c of V.completed) {
  test(`completed ${show(c.sentence)}`, () => assert.equal(fullSupport.completed(c.sentence), c.completed));
}

for (const c of V.unsupported) {
  test(`unsupported ${show(c.sentence)}`, () => {
    const questionWords = new Set((c.question.match(pyRegex(PYTHON_PATTERNS.WORD[0], { global: true })) || []).map(fold));
    assert.deepEqual(unsupported(c.sentence, fullSupport, questionWords, new Set(), c.people, new Set(c.premises)), c.claims);
  });
}

for (const c of V.attribution) {
  test(`attribution ${show(c.sentence)}`, () => {
    const picked = c.passages.map((i) => passageTerms[i]);
    assert.deepEqual(attribute(c.sentence, picked, lexicon, lexicon.tokenize(c.question)), c.attribute);
    assert.deepEqual(validMarkers(c.sentence, picked, lexicon), c.valid_markers);
    const terms = lexicon.tokenize(plain(c.sentence));
    c.passages.forEach((i, k) => {
      const [share, count] = support(terms, passageTerms[i], lexicon);
      assert.ok(Math.abs(share - c.shares[k][0]) < 1e-12, `share ${share} vs ${c.shares[k][0]}`);
      assert.equal(count, c.shares[k][1]);
    });
  });
}

for (const c of V.premises) {
  test(`premises ${show(c.question)}`, () => {
    assert.deepEqual(siteWords.unknownTerms(c.question), c.terms);
    assert.equal(notice(siteWords.unknownTerms(c.question)), c.notice);
    assert.equal(correction(siteWords.unknownTerms(c.question)), c.correction);
  });
}

for (const c of V.affirmation) {
  test(`affirmation ${show(c.question)} ${show(c.answer)}`, () => {
    assert.deepEqual(askedTerms(c.question, lexicon.tokenize, siteTerms), c.asked);
    assert.deepEqual([...namedTerms(c.question, lexicon.tokenize)].sort(), c.named);
    const evidence = c.passages.map((i) => C.evidence[i]);
    assert.equal(unconfirmedYes(c.answer, c.question, evidence, C.facts, lexicon.tokenize, siteTerms), c.unconfirmed);
    assert.equal(unconfirmedPremise(c.answer, c.question, evidence, C.facts, lexicon.tokenize, siteTerms), c.premise);
  });
}

for (const c of V.holds) test(`holds ${show(c.term)}`, () => assert.equal(holds(c.term, new Set(c.window)), c.holds));

for (const c of V.ground) {
  test(`ground ${show(c.answer)}`, () => {
    const evidence = c.passages.map((i) => C.evidence[i]);
    const { text, cited, changed, grounded, removed, factCited, declined } = site.ground(c.answer, c.question, evidence, {
      checkClaims: c.check_claims,
    });
    assert.deepEqual({ text, cited, changed, grounded, removed, factCited, declined }, {
      text: c.text, cited: c.cited, changed: c.changed, grounded: c.grounded, removed: c.removed,
      factCited: c.fact_cited, declined: c.declined,
    });
  });
}
