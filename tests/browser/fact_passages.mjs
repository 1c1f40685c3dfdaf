// Usage: node tests/browser/fact_passages.mjs ARTIFACT.json
// Prints the fact passages the box's grounding cites ({label, text, url}) for a published
// artifact, for tests/test_browser_grounding.py to compare with the Python SiteGrounding.
import { readFileSync } from "node:fs";
import { expandArtifact } from "../../site_knowledge/browser/artifact.js";
import { factPassagesOf } from "../../site_knowledge/browser/grounding.js";

const [input] = process.argv.slice(2);
console.log(JSON.stringify({ passages: factPassagesOf(expandArtifact(JSON.parse(readFileSync(input, "utf8")))) }));
