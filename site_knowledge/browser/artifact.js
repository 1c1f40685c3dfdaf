// The JavaScript twin of site_knowledge/retrieval/artifact_form.py (SPEC.md, "Files"): the
// compact site-knowledge/2 document expanded into the flat sources and passages that
// retrieval.js scores. No DOM, so the search worker and node tests share it.

export const SCHEMA = "site-knowledge/2";
const OLDER_SCHEMAS = new Set(["site-knowledge/1"]);
const HEADING_SEPARATOR = " > ";
const DESCRIPTION_CHARS = 200;
const NO_HEADING = -1;
const PRINTABLE_ASCII = /^[ -~]*$/;

/** A page's source id from its docs-relative path: `blog/posts/a_b.md` -> `blog-posts-a-b`. */
export function sourceIdFor(srcPath) {
  const stem = srcPath.toLowerCase().replace(/\.(md|markdown)$/, "");
  return stem.replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "index";
}

/** The source file MkDocs renders at a directory URL: `a/b/` -> `a/b.md`, `""` -> `index.md`. */
export function defaultPath(url) {
  return url ? `${url.replace(/\/+$/, "")}.md` : "index.md";
}

/** Python-Markdown's default anchor for a heading of printable ASCII, else null. */
export function headingSlug(leaf) {
  if (!PRINTABLE_ASCII.test(leaf)) return null;
  return leaf
    .replace(/[^\w\s-]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[-\s]+/g, "-");
}

function defaultDescription(items) {
  const first = items.find((item) => typeof item === "string") || "";
  return Array.from(first).slice(0, DESCRIPTION_CHARS).join("");
}

function expandHeadings(nodes, sourceId) {
  const out = [];
  nodes.forEach((node, index) => {
    const [parent, leaf, explicit] = typeof node === "string" ? [NO_HEADING, node, undefined] : node;
    if (!(parent >= NO_HEADING && parent < index)) {
      throw new Error(`artifact invalid: source ${sourceId}: heading ${index} names unknown parent ${parent}`);
    }
    const path = parent === NO_HEADING ? leaf : `${out[parent][0]}${HEADING_SEPARATOR}${leaf}`;
    const anchor = explicit === undefined ? headingSlug(leaf) : explicit;
    if (anchor === null) {
      throw new Error(`artifact invalid: source ${sourceId}: heading ${index} needs an explicit anchor`);
    }
    out.push([path, anchor]);
  });
  return out;
}

/**
 * The compact artifact as readers score it: `sources` as {id, kind, title, description, url,
 * authority, path, lang} and `passages` as {id, source, heading, text, url}, in source order.
 * @param {object} doc the parsed site-knowledge.json
 */
export function expandArtifact(doc) {
  if (OLDER_SCHEMAS.has(doc.schema)) {
    throw new Error(
      `artifact format ${doc.schema} is older than this reader's ${SCHEMA}: rebuild the site (mkdocs build) to update it`,
    );
  }
  if (doc.schema !== SCHEMA) throw new Error(`unknown artifact schema ${doc.schema} (this reader reads ${SCHEMA})`);
  const sources = [];
  const passages = [];
  for (const compact of doc.sources) {
    const kind = compact.kind ?? "page";
    const path = "path" in compact ? compact.path : kind === "page" ? defaultPath(compact.url) : null;
    const source = {
      id: compact.id ?? sourceIdFor(path ?? ""),
      kind,
      title: compact.title,
      description: compact.description ?? defaultDescription(compact.passages),
      url: compact.url,
      authority: compact.authority ?? "prose",
      path,
      lang: compact.lang ?? doc.site?.lang ?? "",
    };
    sources.push(source);
    const headings = expandHeadings(compact.headings, source.id);
    let [heading, anchor] = ["", ""];
    let index = 0;
    for (const item of compact.passages) {
      if (typeof item === "number") {
        if (!(item >= NO_HEADING && item < headings.length)) {
          throw new Error(`artifact invalid: source ${source.id}: passages name unknown heading ${item}`);
        }
        [heading, anchor] = item === NO_HEADING ? ["", ""] : headings[item];
        continue;
      }
      const url = anchor ? `${source.url}#${anchor}` : source.url;
      passages.push({ id: `${source.id}#${index}`, source: source.id, heading, text: item, url });
      index += 1;
    }
  }
  return { ...doc, sources, passages };
}

/**
 * The expanded artifact's sidecars, read with `readBytes(name)` (a file beside the JSON, to an
 * ArrayBuffer): the vectors, and the gate's reference file, which becomes
 * `gate.elsewhere.vectors` as in the Python loader (retrieval.js `decodeElsewhere`).
 */
export async function withSidecars(artifact, readBytes) {
  const [vectors, reference] = await Promise.all([
    readBytes(artifact.vectors.file),
    readBytes(artifact.gate.elsewhere.file),
  ]);
  const elsewhere = { ...artifact.gate.elsewhere, vectors: reference };
  return { artifact: { ...artifact, gate: { ...artifact.gate, elsewhere } }, vectors };
}
