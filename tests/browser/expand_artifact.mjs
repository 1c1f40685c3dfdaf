// Usage: node tests/browser/expand_artifact.mjs IN.json OUT.json
// Expands a compact site-knowledge/2 document with the browser's loader (artifact.js) and writes
// the result, for tests/test_retrieval_artifact.py to compare with the Python expansion.
import { readFileSync, writeFileSync } from "node:fs";
import { expandArtifact } from "../../site_knowledge/browser/artifact.js";

const [input, output] = process.argv.slice(2);
let result;
try {
  result = { expanded: expandArtifact(JSON.parse(readFileSync(input, "utf8"))) };
} catch (error) {
  result = { error: String(error.message) };
}
writeFileSync(output, JSON.stringify(result));
console.log(JSON.stringify({ ok: !result.error }));
