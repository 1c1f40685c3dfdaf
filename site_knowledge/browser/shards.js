// The sharded artifact (compiler/shards.py): from a small manifest the box fetches the
// passages' lengths and vectors when it opens, then per question only the lexical shards of
// its terms and the text fragments of its results, each once. The ranking is retrieval.js's
// Index.search over what was fetched, the same floats. On a site whose vectors are cut into
// partitions it opens the nearest to each query vector instead (an approximate dense list).
// No DOM: the worker and node share it.

import { SCHEMA, expandArtifact } from "./artifact.js";
import { chars } from "./pystr.js";
import { Index, TOKENIZER, accepts, decodeElsewhere, dequantize, diverseTop, dotRows, fuse, idf, meanUnitRows, ranked, scoreAt, tokenize } from "./retrieval.js";
import { STEM, SiteWords, WORD, fold } from "./words.js";

export const SHARDS_SCHEMA = "site-knowledge-shards/1";

/** Each file beside the manifest fetched once and decoded once; `bytes` counts what came. */
export class ShardCache {
  /** @param {(name: string) => Promise<ArrayBuffer>} readBytes */
  constructor(readBytes) {
    this.readBytes = readBytes;
    this.files = new Map();
    this.bytes = 0;
  }

  get(name, decode) {
    let file = this.files.get(name);
    if (!file) {
      file = this.readBytes(name).then((buffer) => {
        this.bytes += buffer.byteLength;
        return decode(buffer);
      });
      file.catch(() => this.files.delete(name));
      this.files.set(name, file);
    }
    return file;
  }
}

const json = (buffer) => JSON.parse(new TextDecoder().decode(buffer));

/** The index of the last of `sorted` at most `key` (0 when `key` comes first). */
function lastAtMost(sorted, key) {
  let [low, high] = [0, sorted.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid] <= key) low = mid + 1;
    else high = mid;
  }
  return Math.max(0, low - 1);
}

function firstAtLeast(sorted, key) {
  let [low, high] = [0, sorted.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid] < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

function undelta(values) {
  const out = new Array(values.length);
  let last = 0;
  for (let i = 0; i < values.length; i++) out[i] = last += values[i];
  return out;
}

/** BM25 impacts as retrieval.js's BM25 computes them, from term counts and lengths. */
function impacts(tfs, lengths, size, total, df, k1, b) {
  const average = size && total ? total / size : 1;
  const weight = idf(size, df);
  return tfs.map((tf, i) => ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[i]) / average))) * weight);
}

/** A page's term count and length summed over its passages, as the single file's page
 * documents concatenate them (passages are in source order). */
function pagePostings(rows, tfs, sourceOf) {
  const [pages, pageTfs] = [[], []];
  rows.forEach((row, i) => {
    if (pages[pages.length - 1] === sourceOf[row]) {
      pageTfs[pageTfs.length - 1] += tfs[i];
    } else {
      pages.push(sourceOf[row]);
      pageTfs.push(tfs[i]);
    }
  });
  return [pages, pageTfs];
}

function decodeLexical(index) {
  const { shards, lexical: { k1, b }, counts } = index.manifest;
  const { passages, tokens } = shards.lexical;
  return (buffer) => {
    const entries = json(buffer);
    const terms = new Map();
    for (const [term, deltas, tfs] of entries) {
      const rows = undelta(deltas);
      const [pages, pageTfs] = pagePostings(rows, tfs, index.sourceOf);
      terms.set(term, {
        rows,
        values: impacts(tfs, rows.map((r) => index.lengths[r]), passages, tokens, rows.length, k1, b),
        pages,
        pageValues: impacts(pageTfs, pages.map((s) => index.pageLengths[s]), counts.sources, tokens, pages.length, k1, b),
      });
    }
    return { terms, keys: entries.map(([term]) => fold(term)) };
  };
}

function decodePartition(dimension) {
  return (buffer) => {
    const view = new DataView(buffer);
    const n = view.getUint32(0, true);
    const ids = Array.from({ length: n }, (_, i) => view.getUint32(4 + 4 * i, true));
    return { ids, rows: dequantize(buffer.slice(4 + 4 * n), n, dimension) };
  };
}

/** Indices of scores (an array by index, or a Map of the fetched ones) among those `keep`
 * accepts, best first (ties by index), as `ranked` orders an array. */
function rankedKeys(scores, limit, positiveOnly = false, keep = null) {
  if (!(scores instanceof Map)) return ranked(scores, limit, positiveOnly, keep && Array.from(scores, (_, i) => keep(i)));
  const order = [];
  for (const [index, score] of scores) if ((!positiveOnly || score > 0) && (keep === null || keep(index))) order.push(index);
  order.sort((a, b) => scores.get(b) - scores.get(a) || a - b);
  return order.slice(0, limit);
}

function rankMap(order) {
  return new Map(order.map((index, i) => [index, i + 1]));
}

/** The search of a sharded artifact; `artifact`, `bm25` and `stopwords` as SiteGrounding.fromIndex reads them. */
export class ShardedIndex {
  /**
   * @param {object} manifest the parsed site-knowledge.shards.json
   * @param {(name: string) => Promise<ArrayBuffer>} readBytes a file beside the manifest
   * @param {{probes?: number}} options how many dense partitions a query vector opens (when
   *   the vectors are partitioned)
   */
  static async open(manifest, readBytes, { probes } = {}) {
    if (manifest.schema !== SHARDS_SCHEMA) throw new Error(`unknown sharded artifact schema ${manifest.schema}`);
    if (manifest.artifact_schema !== SCHEMA) throw new Error(`unknown artifact schema ${manifest.artifact_schema}`);
    if (manifest.lexical.tokenizer !== TOKENIZER) throw new Error(`unknown tokenizer ${manifest.lexical.tokenizer}`);
    const index = new ShardedIndex(manifest, new ShardCache(readBytes), probes ?? manifest.shards.dense.probes);
    const { dense, lexical } = manifest.shards;
    const { passages, sources } = manifest.counts;
    const d = index.dimension;
    const [reference, lengths, rows, centroids, pageRows, facts] = await Promise.all([
      index.cache.get(manifest.gate.elsewhere.file, (b) => b),
      index.cache.get(lexical.lengths, json),
      dense.rows && index.cache.get(dense.rows, (b) => dequantize(b, passages, d)),
      dense.centroids && index.cache.get(dense.centroids, (b) => dequantize(b, dense.files.length, d)),
      dense.pages && index.cache.get(dense.pages, (b) => dequantize(b, sources, d)),
      index.passages(manifest.ontology, true),
    ]);
    const gate = { ...manifest.gate, elsewhere: { ...manifest.gate.elsewhere, vectors: reference } };
    index.elsewhere = decodeElsewhere(gate, d);
    index.lengths = lengths;
    index.pageLengths = new Array(sources).fill(0);
    lengths.forEach((length, i) => (index.pageLengths[index.sourceOf[i]] += length));
    index.rows = rows;
    index.centroids = centroids;
    // Whole rows: the page vectors as retrieval.js's Index averages them, the same floats.
    index.pageRows = rows ? meanUnitRows(rows, index.sourceOf, sources, d) : pageRows;
    index.artifact = { ...manifest, gate, ...facts };
    return index;
  }

  constructor(manifest, cache, probes) {
    this.manifest = manifest;
    this.cache = cache;
    this.probes = probes;
    this.dimension = manifest.embedding.dimension;
    this.stopwords = new Set(manifest.lexical.stopwords);
    this.authority = new Map();
    for (const kind of ["fact", "fiction"]) for (const s of manifest.authority[kind]) this.authority.set(s, kind);
    this.loaded = new Map();
    this.sourceOf = manifest.counts.per_source.flatMap((count, source) => new Array(count).fill(source));
    this.sourceLangs = manifest.source_langs ?? [];
    this.ontology = manifest.counts.per_source.map(() => false);
    for (const source of manifest.ontology) this.ontology[source] = true;
    this.languages = new Set(this.sourceLangs.filter((lang) => lang));
    const size = manifest.shards.lexical.passages;
    this.bm25 = { size, postings: new Map(), df: (term) => this.loaded.get(term)?.rows.length ?? 0 };
    this.siteWords = new ShardWords(this, manifest.lexical.stopwords);
  }

  /** Bytes fetched so far. */
  get bytes() {
    return this.cache.bytes;
  }

  lexicalShard(key) {
    const { lexical } = this.manifest.shards;
    const at = lastAtMost(lexical.first, key);
    return [at, this.cache.get(lexical.files[at], decodeLexical(this))];
  }

  /** The postings of `terms` (null for a term the site never uses), kept for `bm25.df`. */
  async postings(terms) {
    const distinct = [...new Set(terms)];
    const shards = await Promise.all(distinct.map((term) => this.lexicalShard(fold(term))[1]));
    distinct.forEach((term, i) => this.loaded.set(term, shards[i].terms.get(term) ?? null));
    return this.loaded;
  }

  /** Fetch the lexical shards of every token of `texts` (grounding reads their IDF). */
  async prepareTerms(texts) {
    await this.postings(texts.flatMap((text) => tokenize(text, this.stopwords)));
  }

  /** Fetch what `siteWords` needs to judge the words of `question`. */
  async prepareWords(question) {
    await Promise.all([...question.matchAll(WORD)].flatMap(([word]) => this.siteWords.keys(word).map((key) => this.hasKey(key))));
  }

  /** A folded term equals `key`, or (from STEM letters on) starts with it. */
  async hasKey(key) {
    const { first } = this.manifest.shards.lexical;
    const [at, shard] = this.lexicalShard(key);
    const { keys } = await shard;
    const next = firstAtLeast(keys, key);
    const found = next < keys.length ? keys[next] : first[at + 1];
    const usable = found !== undefined && (found === key || (chars(key).length >= STEM && found.startsWith(key)));
    this.siteWords.known.set(key, usable);
    return usable;
  }

  /** Dense scores of every passage (whole rows), or of those in the `probes` partitions
   * nearest `vector`; and of every page. */
  async denseScores(vector) {
    const { dense } = this.manifest.shards;
    const { passages: count, sources } = this.manifest.counts;
    const pages = dotRows(this.pageRows, sources, this.dimension, vector);
    if (this.rows) return { passages: dotRows(this.rows, count, this.dimension, vector), pages };
    const near = ranked(dotRows(this.centroids, dense.files.length, this.dimension, vector), this.probes);
    const parts = await Promise.all(near.map((i) => this.cache.get(dense.files[i], decodePartition(this.dimension))));
    const passages = new Map();
    for (const part of parts) {
      const scores = dotRows(part.rows, part.ids.length, this.dimension, vector);
      part.ids.forEach((id, i) => passages.set(id, scores[i]));
    }
    return { passages, pages };
  }

  /** The expanded passages (and their sources) at these global indices, or of these sources. */
  async passages(indices, bySource = false) {
    const text = this.manifest.shards.text;
    const firsts = bySource ? text.first_source : text.first_passage;
    const fragments = [...new Set(indices.map((i) => lastAtMost(firsts, i)))];
    const expanded = await Promise.all(fragments.map((f) =>
      this.cache.get(text.files[f], (buffer) => {
        const doc = expandArtifact({ schema: SCHEMA, site: this.manifest.site, sources: json(buffer) });
        return { ...doc, fragment: f };
      })));
    const wanted = new Set(indices);
    const sources = [];
    const passages = new Map();
    for (const doc of expanded) {
      const sourceById = new Map(doc.sources.map((s) => [s.id, s]));
      doc.sources.forEach((s, i) => {
        if (bySource && wanted.has(text.first_source[doc.fragment] + i)) sources.push(s);
      });
      doc.passages.forEach((p, i) => {
        const global = text.first_passage[doc.fragment] + i;
        const source = sourceById.get(p.source);
        if (bySource ? sources.includes(source) : wanted.has(global)) passages.set(global, { passage: p, source });
      });
    }
    return bySource ? { sources, passages: [...passages.values()].map((e) => e.passage) } : passages;
  }

  /** Scores summed term by term in query order, as BM25.scores sums them. */
  lexicalScores(terms, postings, pages) {
    const out = new Map();
    for (const term of new Set(terms)) {
      const posting = postings.get(term);
      if (!posting) continue;
      const [rows, values] = pages ? [posting.pages, posting.pageValues] : [posting.rows, posting.values];
      rows.forEach((row, i) => out.set(row, (out.get(row) ?? 0) + values[i]));
    }
    return out;
  }

  /** The language a question asked in `lang` keeps to, as Index.language decides it. */
  language(lang) {
    return Index.prototype.language.call(this, lang);
  }

  /** As retrieval.js Index.search, over the fetched shards (SPEC.md, "Fusion", "Gate" and
   * "Languages"). */
  async search(text, queryVector, { topK = 4, mode = "hybrid", rankText = null, rankVector = null, lang = null } = {}) {
    const cfg = this.manifest.retrieval;
    const queryTerms = tokenize(text, this.stopwords);
    const rankTerms = rankText === null ? [] : tokenize(rankText, this.stopwords);
    const ranking = rankTerms.length > 0;
    const terms = ranking ? rankTerms : queryTerms;
    const vector = ranking ? rankVector : queryVector;
    const [postings, queryDense, rankDense] = await Promise.all([
      this.postings([...queryTerms, ...terms]),
      this.denseScores(queryVector),
      ranking ? this.denseScores(vector) : null,
    ]);
    const dense = rankDense ?? queryDense;
    const elsewhere = Math.max(-1, ...dotRows(this.elsewhere.rows, this.elsewhere.count, this.dimension, queryVector));
    let scope = this.language(lang);
    let signals = this.signals(queryTerms, postings, queryDense.passages, elsewhere, scope);
    if (scope !== null && !accepts(signals, this.manifest.gate)) {
      scope = null;
      signals = this.signals(queryTerms, postings, queryDense.passages, elsewhere, scope);
    }
    const gate = { answerable: accepts(signals, this.manifest.gate), ...signals };
    const keep = scope === null ? null : (p) => this.sourceLangs[this.sourceOf[p]] === scope;
    const pageKeep = scope === null ? null : (s) => this.sourceLangs[s] === scope;
    const bm25 = this.lexicalScores(terms, postings, false);
    const bm25Order = rankedKeys(bm25, cfg.candidates, true, keep);
    const denseOrder = rankedKeys(dense.passages, cfg.candidates, false, keep);
    let order;
    let score;
    if (mode === "bm25" || mode === "dense") {
      [order, score] = mode === "bm25" ? [bm25Order, bm25] : [denseOrder, dense.passages];
    } else {
      [order, score] = await this.fuse(terms, postings, bm25Order, denseOrder, dense.pages, pageKeep);
    }
    const scoreOf = (i) => scoreAt(score, i);
    const top = diverseTop(order, this.sourceOf, topK, cfg.per_page_cap, cfg.lead_passages ?? 1,
      this.ontology, scoreOf, cfg.lead_share ?? 0);
    const found = await this.passages(top);
    const results = top.map((i, rank) => {
      const { passage: p, source: src } = found.get(i);
      return {
        rank: rank + 1, id: p.id, source: p.source, title: src.title, heading: p.heading, url: p.url,
        text: p.text, authority: src.authority, score: scoreOf(i),
      };
    });
    return { query: text, terms: queryTerms, results, gate, lang: scope };
  }

  async fuse(terms, postings, bm25Order, denseOrder, pageDense, pageKeep) {
    const cfg = this.manifest.retrieval;
    const rb = rankMap(bm25Order);
    const rd = rankMap(denseOrder);
    const rpb = rankMap(rankedKeys(this.lexicalScores(terms, postings, true), cfg.page_candidates, true, pageKeep));
    const rpd = rankMap(rankedKeys(pageDense, cfg.page_candidates, false, pageKeep));
    const c = this.lexicalConfidence(terms, postings, bm25Order);
    const candidates = [...new Set([...bm25Order, ...denseOrder])];
    const factor = (p) => cfg.authority[this.authority.get(this.sourceOf[p]) ?? "prose"];
    const demoted = candidates.filter((p) => factor(p) !== 1);
    const urls = demoted.length && bm25Order.length && denseOrder.length
      ? await this.passages([bm25Order[0], denseOrder[0], ...demoted]) : new Map();
    const firstUrl = (p) => urls.get(p)?.passage.url;
    const about = urls.size && firstUrl(bm25Order[0]) === firstUrl(denseOrder[0]) ? firstUrl(bm25Order[0]) : null;
    const weight = (p) => (about !== null && firstUrl(p) === about ? 1 : factor(p));
    const rrf = fuse(candidates, { rb, rd, rpb, rpd }, c, cfg, this.sourceOf, weight);
    return [candidates.sort((a, b) => rrf.get(b) - rrf.get(a) || a - b), rrf];
  }

  /** SPEC.md, fusion step 2, with the best passage's terms read from the postings. */
  lexicalConfidence(terms, postings, bm25Order) {
    if (!bm25Order.length) return 0;
    const best = bm25Order[0];
    let [held, total] = [0, 0];
    for (const term of new Set(terms)) {
      const posting = postings.get(term);
      const weight = idf(this.bm25.size, posting ? posting.rows.length : 0);
      total += weight;
      if (posting && posting.rows.includes(best)) held += weight;
    }
    const share = total === 0 ? 0 : held / total;
    return share * share;
  }

  /** The gate's inputs over the passages in `scope` (a language), or all when null, as
   * Index.scopedSignals reads them: a term counts as found when a passage in scope holds it. */
  signals(terms, postings, dense, elsewhere, scope) {
    const inScope = (p) => scope === null || this.sourceLangs[this.sourceOf[p]] === scope;
    let [seen, all] = [0, 0];
    for (const term of new Set(terms)) {
      const rows = postings.get(term)?.rows ?? [];
      const weight = idf(this.bm25.size, rows.length);
      all += weight;
      if (rows.some(inScope)) seen += weight;
    }
    let cosine = -1;
    for (const [p, value] of dense.entries()) if (value > cosine && inScope(p)) cosine = value;
    return { has_terms: terms.length > 0, coverage: all === 0 ? 0 : seen / all, cosine, elsewhere };
  }
}

/** SiteWords over the lexical shards: `uses` reads keys that `ShardedIndex.prepareWords` fetched. */
export class ShardWords extends SiteWords {
  constructor(index, stopwords) {
    super([], stopwords);
    this.index = index;
    this.known = new Map();
  }

  /** The folded keys `uses(word)` asks about. */
  keys(word) {
    const folded = chars(fold(word));
    return [folded.slice(0, Math.max(STEM, folded.length - 3)).join(""), folded.join("")];
  }

  uses(word) {
    return this.keys(word).some((key) => this.known.get(key) === true);
  }
}
