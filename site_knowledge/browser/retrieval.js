// The JavaScript twin of site_knowledge/retrieval (SPEC.md): tokenizer, BM25, dense, fusion,
// gate. Pure functions over the artifact; no DOM, so the search worker and node tests share it.

import { SCHEMA } from "./artifact.js";
import { isDigit, length } from "./pystr.js";

export const TOKENIZER = "sk-words/2";
const WORD = /[\p{L}\p{N}]+/gu;
// Han, Hiragana, Katakana and Hangul runs (tokenizer.py's CJK): read as overlapping pairs.
const CJK =
  /([\u{1100}-\u{11ff}\u{2e80}-\u{2fdf}\u{3005}-\u{3007}\u{3021}-\u{3029}\u{3038}-\u{303c}\u{3041}-\u{30ff}\u{3130}-\u{318f}\u{31f0}-\u{31ff}\u{3400}-\u{4dbf}\u{4e00}-\u{9fff}\u{a960}-\u{a97f}\u{ac00}-\u{d7ff}\u{f900}-\u{faff}\u{20000}-\u{3ffff}]+)/u;

/** SPEC.md's plural folding; lengths in code points, as Python counts them. */
export function foldPlural(token) {
  const size = length(token);
  if (size > 4 && token.endsWith("ies")) return token.slice(0, -3) + "y";
  if (size > 3 && token.endsWith("s") && !/(ss|us|is)$/.test(token)) {
    return token.slice(0, -1);
  }
  return token;
}

/** A CJK run as its overlapping character pairs; a lone character stays itself. */
export function bigrams(run) {
  const letters = [...run];
  if (letters.length === 1) return letters;
  return letters.slice(1).map((letter, i) => letters[i] + letter);
}

/** sk-words/2: NFKC, lower case, letter/digit runs, CJK pairs, stopwords, one-char non-digits,
 * plurals. */
export function tokenize(text, stopwords) {
  const words = text.normalize("NFKC").toLowerCase().match(WORD) || [];
  const out = [];
  for (const word of words) {
    word.split(CJK).forEach((part, index) => {
      if (index % 2) out.push(...bigrams(part));
      else if (part && !stopwords.has(part) && (length(part) > 1 || isDigit(part))) out.push(foldPlural(part));
    });
  }
  return out;
}

/** The passage text that is tokenized and embedded (SPEC.md, "Indexed text"). */
export function indexedText(passage, source) {
  const title = source.title;
  const heading = passage.heading || "";
  if (!heading || heading === title) return `${title}: ${passage.text}`;
  return `${title} > ${heading}: ${passage.text}`;
}

/** ln(1 + (N - n + 0.5) / (n + 0.5)): positive for every n (SPEC.md, "Scoring"). */
export function idf(size, df) {
  return Math.log(1 + (size - df + 0.5) / (df + 0.5));
}

/** A BM25 index over tokenized documents, postings precomputed as idf-weighted impacts. */
export class BM25 {
  constructor(documents, k1, b) {
    this.size = documents.length;
    let total = 0;
    for (const doc of documents) total += doc.length;
    const average = this.size && total ? total / this.size : 1;
    const postings = new Map();
    documents.forEach((doc, index) => {
      const counts = new Map();
      for (const term of doc) counts.set(term, (counts.get(term) || 0) + 1);
      const norm = k1 * (1 - b + (b * doc.length) / average);
      for (const [term, tf] of counts) {
        let list = postings.get(term);
        if (!list) postings.set(term, (list = []));
        list.push(index, (tf * (k1 + 1)) / (tf + norm));
      }
    });
    this.postings = new Map();
    for (const [term, list] of postings) {
      const df = list.length / 2;
      const weight = idf(this.size, df);
      const rows = new Int32Array(df);
      const values = new Float64Array(df);
      for (let i = 0; i < df; i++) {
        rows[i] = list[2 * i];
        values[i] = list[2 * i + 1] * weight;
      }
      this.postings.set(term, { rows, values });
    }
  }

  df(term) {
    const posting = this.postings.get(term);
    return posting ? posting.rows.length : 0;
  }

  scores(terms) {
    const total = new Float64Array(this.size);
    for (const term of new Set(terms)) {
      const posting = this.postings.get(term);
      if (!posting) continue;
      const { rows, values } = posting;
      for (let i = 0; i < rows.length; i++) total[rows[i]] += values[i];
    }
    return total;
  }

  /** The IDF share of the distinct terms found in the corpus, or in `within` (a Set: the terms
   * of one language's passages). */
  coverage(terms, within = null) {
    let seen = 0;
    let all = 0;
    for (const term of new Set(terms)) {
      const df = this.df(term);
      const weight = idf(this.size, df);
      all += weight;
      if (within === null ? df > 0 : within.has(term)) seen += weight;
    }
    return all === 0 ? 0 : seen / all;
  }
}

/** Indices of the `limit` best scores (among `keep`, booleans by index), ties by index ascending. */
export function ranked(scores, limit, positiveOnly = false, keep = null) {
  const order = [];
  for (let i = 0; i < scores.length; i++) {
    if ((!positiveOnly || scores[i] > 0) && (keep === null || keep[i])) order.push(i);
  }
  order.sort((a, b) => scores[b] - scores[a] || a - b);
  return order.slice(0, limit);
}

function rankMap(order) {
  const map = new Map();
  order.forEach((index, i) => map.set(index, i + 1));
  return map;
}

/** Reciprocal rank fusion (SPEC.md): each candidate's passage and page ranks, BM25 weighted by
 * the lexical confidence ``c``, times its ``factor`` (authority, or 1 for the section both
 * lists rank first). */
export function fuse(candidates, { rb, rd, rpb, rpd }, c, cfg, sourceOf, factor) {
  const { weights: w, rrf_k: k } = cfg;
  const rrf = new Map();
  for (const p of candidates) {
    const s = sourceOf[p];
    let value = 0;
    if (rb.has(p)) value += (c * w.bm25) / (k + rb.get(p));
    if (rd.has(p)) value += w.dense / (k + rd.get(p));
    if (rpb.has(s)) value += (c * w.page_bm25) / (k + rpb.get(s));
    if (rpd.has(s)) value += w.page_dense / (k + rpd.get(s));
    rrf.set(p, value * factor(p));
  }
  return rrf;
}

/** A passage's score in a ranking: from the fused Map, or by index from a single mode's array. */
export function scoreAt(score, index) {
  return score instanceof Map ? score.get(index) : score[index];
}

/** Keep at most `cap` passages per source until `topK`; fill from the skipped ones. The first
 * `lead` passages of `order` whose `score` (a function of the index) is at least `leadShare` of
 * the first one's are kept whatever their source's count, unless `capped` (booleans by source)
 * marks it: an ontology category (SPEC.md, "Fusion" step 4). */
export function diverseTop(order, sourceOf, topK, cap, lead = 1, capped = null, score = null, leadShare = 0) {
  const kept = [];
  const skipped = [];
  const perSource = new Map();
  const floor = order.length && score ? leadShare * score(order[0]) : 0;
  for (const [position, index] of order.entries()) {
    if (kept.length === topK) break;
    const source = sourceOf[index];
    const count = perSource.get(source) || 0;
    const leading = position < lead && !(capped && capped[source]) && (!score || score(index) >= floor);
    if (leading || count < cap) {
      perSource.set(source, count + 1);
      kept.push(index);
    } else {
      skipped.push(index);
    }
  }
  return kept.concat(skipped.slice(0, topK - kept.length));
}

/** Dequantize the sidecar into float32 rows (Math.fround matches numpy's float32 product). */
export function dequantize(buffer, count, dimension) {
  const bytes = new Uint8Array(buffer);
  const expected = count * dimension + 4 * count;
  if (bytes.byteLength !== expected) {
    throw new Error(`vectors sidecar has ${bytes.byteLength} bytes, expected ${expected}`);
  }
  const rows = new Int8Array(bytes.buffer, bytes.byteOffset, count * dimension);
  const scales = new DataView(bytes.buffer, bytes.byteOffset + count * dimension, 4 * count);
  const out = new Float32Array(count * dimension);
  for (let i = 0; i < count; i++) {
    const scale = scales.getFloat32(4 * i, true);
    for (let j = 0; j < dimension; j++) out[i * dimension + j] = rows[i * dimension + j] * scale;
  }
  return out;
}

export function dotRows(matrix, rowCount, dimension, query) {
  const out = new Float64Array(rowCount);
  for (let i = 0; i < rowCount; i++) {
    let sum = 0;
    const base = i * dimension;
    for (let j = 0; j < dimension; j++) sum += matrix[base + j] * query[j];
    out[i] = Math.fround(sum);
  }
  return out;
}

/** The L2-normalised mean of the rows of each group (a page vector per source). */
export function meanUnitRows(matrix, groups, size, dimension) {
  const sums = new Float64Array(size * dimension);
  groups.forEach((group, i) => {
    for (let j = 0; j < dimension; j++) sums[group * dimension + j] += matrix[i * dimension + j];
  });
  const out = new Float32Array(size * dimension);
  for (let g = 0; g < size; g++) {
    let norm = 0;
    for (let j = 0; j < dimension; j++) norm += sums[g * dimension + j] ** 2;
    norm = Math.max(Math.sqrt(norm), 1e-12);
    for (let j = 0; j < dimension; j++) out[g * dimension + j] = sums[g * dimension + j] / norm;
  }
  return out;
}

function maxOf(values) {
  let best = -1;
  for (let i = 0; i < values.length; i++) if (values[i] > best) best = values[i];
  return best;
}

/**
 * The gate's inputs (SPEC.md, "Gate"): whether the query has terms, its IDF coverage (terms
 * found in `within`, default the corpus), its best cosine over the passages given and its best
 * cosine with the kept questions from elsewhere (-1 for none).
 */
export function gateSignals(bm25, terms, dense, elsewhere, within = null) {
  return {
    has_terms: terms.length > 0,
    coverage: bm25.coverage(terms, within),
    cosine: maxOf(dense),
    elsewhere: maxOf(elsewhere),
  };
}

/**
 * The gate's rule: enough known terms and a plausible cosine, or a strong cosine alone; and
 * the best passage at least `min_margin` nearer than any question from elsewhere.
 */
export function accepts(signals, gate) {
  const topical =
    (signals.has_terms && signals.coverage >= gate.min_coverage && signals.cosine >= gate.min_cosine) ||
    signals.cosine >= gate.strong_cosine;
  return topical && signals.cosine - signals.elsewhere >= gate.min_margin;
}

/**
 * The kept questions from elsewhere as float32 rows: the reference file's rows
 * (`gate.elsewhere.vectors`, attached by artifact.js `withSidecars`) less those the site
 * leaves out. A gate without `elsewhere` has none.
 */
export function decodeElsewhere(gate, dimension) {
  const { count, left_out: leftOut, vectors } = gate.elsewhere || { count: 0, left_out: [], vectors: new ArrayBuffer(0) };
  const all = dequantize(vectors, count, dimension);
  const dropped = new Set(leftOut);
  const rows = new Float32Array((count - dropped.size) * dimension);
  let kept = 0;
  for (let i = 0; i < count; i++) {
    if (dropped.has(i)) continue;
    rows.set(all.subarray(i * dimension, (i + 1) * dimension), kept * dimension);
    kept += 1;
  }
  return { count: kept, rows };
}

/** Everything a query needs, computed once when the artifact loads. */
export class Index {
  /**
   * @param {object} artifact the parsed site-knowledge.json as expandArtifact (artifact.js) returns it
   * @param {ArrayBuffer} vectorBytes the sidecar's bytes
   */
  constructor(artifact, vectorBytes) {
    if (artifact.schema !== SCHEMA) throw new Error(`unknown artifact schema ${artifact.schema}`);
    if (artifact.lexical.tokenizer === "sk-words/1") {
      throw new Error(`artifact tokenizer sk-words/1 is older than this reader's ${TOKENIZER}: rebuild the site (mkdocs build) to update it`);
    }
    if (artifact.lexical.tokenizer !== TOKENIZER) {
      throw new Error(`unknown tokenizer ${artifact.lexical.tokenizer}`);
    }
    this.artifact = artifact;
    this.stopwords = new Set(artifact.lexical.stopwords);
    const sources = artifact.sources;
    const sourceIndex = new Map(sources.map((s, i) => [s.id, i]));
    this.passages = artifact.passages;
    this.sourceOf = this.passages.map((p) => sourceIndex.get(p.source));
    const { k1, b } = artifact.lexical;
    const docs = this.passages.map((p, i) =>
      tokenize(indexedText(p, sources[this.sourceOf[i]]), this.stopwords),
    );
    this.bm25 = new BM25(docs, k1, b);
    this.passageTerms = docs.map((doc) => new Set(doc));
    const pageDocs = sources.map(() => []);
    docs.forEach((doc, i) => {
      const page = pageDocs[this.sourceOf[i]];
      for (const t of doc) page.push(t);
    });
    this.pageBm25 = new BM25(pageDocs, k1, b);
    const { count, dimension } = artifact.vectors;
    if (count !== this.passages.length) throw new Error("vectors count != passages");
    this.dimension = dimension;
    this.vectors = dequantize(vectorBytes, count, dimension);
    this.pageVectors = meanUnitRows(this.vectors, this.sourceOf, sources.length, dimension);
    this.elsewhere = decodeElsewhere(artifact.gate, dimension);
    this.ontology = sources.map((s) => s.kind === "ontology");
    this.sourceLangs = sources.map((s) => s.lang);
    this.passageLangs = this.sourceOf.map((s) => this.sourceLangs[s]);
    this.languages = new Set(this.sourceLangs.filter((lang) => lang));
    this.vocabularies = new Map();
  }

  /** The language a question asked in `lang` keeps to: `lang`, else its primary subtag, among
   * the sources' languages; null when the site has fewer than two or neither is one of them
   * (SPEC.md, "Languages"). */
  language(lang) {
    if (!lang || this.languages.size < 2) return null;
    const tag = lang.trim().toLowerCase().replaceAll("_", "-");
    return [tag, tag.split("-")[0]].find((t) => this.languages.has(t)) ?? null;
  }

  /** The gate's inputs over the passages in `scope` (a language), or all when null. */
  scopedSignals(terms, dense, elsewhere, scope) {
    if (scope === null) return gateSignals(this.bm25, terms, dense, elsewhere);
    if (!this.vocabularies.has(scope)) {
      const words = new Set();
      this.passageTerms.forEach((terms, i) => {
        if (this.passageLangs[i] === scope) for (const t of terms) words.add(t);
      });
      this.vocabularies.set(scope, words);
    }
    const kept = dense.filter((_, i) => this.passageLangs[i] === scope);
    return gateSignals(this.bm25, terms, kept, elsewhere, this.vocabularies.get(scope));
  }

  /** The square of the share of the query's IDF mass held by the best BM25 passage (SPEC.md, fusion step 2). */
  lexicalConfidence(terms, bm25Order) {
    if (!bm25Order.length) return 0;
    const best = this.passageTerms[bm25Order[0]];
    let held = 0;
    let total = 0;
    for (const term of new Set(terms)) {
      const weight = idf(this.bm25.size, this.bm25.df(term));
      total += weight;
      if (best.has(term)) held += weight;
    }
    const share = total === 0 ? 0 : held / total;
    return share * share;
  }

  /** The URL of the section whose passages both lists rank first (the question is about it),
   * or null when their first passages are in different sections. */
  sectionFirstInBoth(bm25Order, denseOrder) {
    if (!bm25Order.length || !denseOrder.length) return null;
    const url = this.passages[bm25Order[0]].url;
    return this.passages[denseOrder[0]].url === url ? url : null;
  }

  /**
   * Rank passages for a retrieval query (SPEC.md, "Fusion", "Premise names" and "Gate").
   * @param {string} text the retrieval query (follow-ups already joined): the gate reads it
   * @param {Float32Array} queryVector its L2-normalised embedding
   * @param {{topK?: number, mode?: "hybrid"|"bm25"|"dense", rankText?: string|null,
   *   rankVector?: Float32Array|null, lang?: string|null}} options `rankText` (with its
   *   embedding `rankVector`): the query without the question's premise names, which the
   *   ranking reads when it has a token; `lang`: the page's language (SPEC.md, "Languages")
   */
  search(text, queryVector, { topK = 4, mode = "hybrid", rankText = null, rankVector = null, lang = null } = {}) {
    const cfg = this.artifact.retrieval;
    const gateCfg = this.artifact.gate;
    const queryTerms = tokenize(text, this.stopwords);
    const queryDense = dotRows(this.vectors, this.passages.length, this.dimension, queryVector);
    const elsewhere = dotRows(this.elsewhere.rows, this.elsewhere.count, this.dimension, queryVector);
    let scope = this.language(lang);
    let signals = this.scopedSignals(queryTerms, queryDense, elsewhere, scope);
    if (scope !== null && !accepts(signals, gateCfg)) {
      scope = null;
      signals = this.scopedSignals(queryTerms, queryDense, elsewhere, scope);
    }
    const answerable = accepts(signals, gateCfg);
    const keep = scope === null ? null : this.passageLangs.map((l) => l === scope);
    const pageKeep = scope === null ? null : this.sourceLangs.map((l) => l === scope);
    const rankTerms = rankText === null ? [] : tokenize(rankText, this.stopwords);
    const ranking = rankTerms.length > 0;
    const terms = ranking ? rankTerms : queryTerms;
    const vector = ranking ? rankVector : queryVector;
    const bm25 = this.bm25.scores(terms);
    const dense = ranking ? dotRows(this.vectors, this.passages.length, this.dimension, vector) : queryDense;
    const bm25Order = ranked(bm25, cfg.candidates, true, keep);
    const denseOrder = ranked(dense, cfg.candidates, false, keep);
    let order;
    let score;
    if (mode === "bm25") {
      order = bm25Order;
      score = bm25;
    } else if (mode === "dense") {
      order = denseOrder;
      score = dense;
    } else {
      const nSources = this.artifact.sources.length;
      const pageBm25 = this.pageBm25.scores(terms);
      const pageDense = dotRows(this.pageVectors, nSources, this.dimension, vector);
      const rb = rankMap(bm25Order);
      const rd = rankMap(denseOrder);
      const rpb = rankMap(ranked(pageBm25, cfg.page_candidates, true, pageKeep));
      const rpd = rankMap(ranked(pageDense, cfg.page_candidates, false, pageKeep));
      const c = this.lexicalConfidence(terms, bm25Order);
      const candidates = [...new Set([...bm25Order, ...denseOrder])];
      const about = this.sectionFirstInBoth(bm25Order, denseOrder);
      const factor = (p) => (about !== null && this.passages[p].url === about
        ? 1 : cfg.authority[this.artifact.sources[this.sourceOf[p]].authority]);
      const rrf = fuse(candidates, { rb, rd, rpb, rpd }, c, cfg, this.sourceOf, factor);
      order = candidates.sort((a, b) => rrf.get(b) - rrf.get(a) || a - b);
      score = rrf;
    }
    const scoreOf = (i) => scoreAt(score, i);
    const top = diverseTop(order, this.sourceOf, topK, cfg.per_page_cap, cfg.lead_passages ?? 1,
      this.ontology, scoreOf, cfg.lead_share ?? 0);
    const sources = this.artifact.sources;
    const results = top.map((i, rank) => {
      const p = this.passages[i];
      const src = sources[this.sourceOf[i]];
      return {
        rank: rank + 1,
        id: p.id,
        source: p.source,
        title: src.title,
        heading: p.heading,
        url: p.url,
        text: p.text,
        authority: src.authority,
        score: scoreOf(i),
      };
    });
    return { query: text, terms: queryTerms, results, gate: { answerable, ...signals }, lang: scope };
  }
}

const HAS_WORD = /[\p{L}\p{N}]/u;

const NOT_WORD = String.raw`[^\p{L}\p{N}_]`;
const POINTING = new RegExp(
  String.raw`^${NOT_WORD}*(?:and|also|but|so|or|then|what\s+about|how\s+about)(?!\p{L}|\p{N}|_)|` +
    String.raw`(?<![\p{L}\p{N}_])(?:it|its|itself|that|this|these|those|they|them|their|theirs|there|then|` +
    String.raw`he|him|his|she|her|hers|one|ones|former|latter|same|such|else)(?![\p{L}\p{N}_])`,
  "iu",
);
const SHORT_QUESTION = 2;

/** The question points back to the conversation (POINTING) or is too short to stand alone
 * (SHORT_QUESTION words or fewer); SPEC.md, "Follow-ups". */
export function refersBack(question) {
  return POINTING.test(question) || (question.match(/[\p{L}\p{N}]+/gu) || []).length <= SHORT_QUESTION;
}

/** What the gate reads: the retrieval query when the question refers back (refersBack), else
 * the question alone (SPEC.md, "Follow-ups"). */
export function gateQuery(question, history, followupTurns) {
  return refersBack(question) ? retrievalQuery(question, history, followupTurns) : question;
}

/**
 * The retrieval query: the last `followupTurns` earlier questions that hold a letter or a
 * digit, joined to the new one by spaces (SPEC.md, "Follow-ups").
 * @param {string} question
 * @param {{question: string}[]} history earlier exchanges, oldest first
 * @param {number} followupTurns
 */
export function retrievalQuery(question, history, followupTurns) {
  if (!followupTurns) return question;
  const earlier = history.map((turn) => turn.question).filter((q) => HAS_WORD.test(q));
  return [...earlier.slice(-followupTurns), question].join(" ");
}
