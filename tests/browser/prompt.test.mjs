// The browser's prompt builder (site_knowledge/browser/prompt.js) against the shared vectors
// the gateway's prompt.py wrote (tests/data/prompt_vectors.json, scripts/make_prompt_vectors.py):
// the same exchanges and passages kept by the character budgets, the same messages.
// Run by tests/test_browser_grounding.py (node --test).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { SAMPLING, buildMessages, fitEvidence, fitHistory, passageOf } from "../../site_knowledge/browser/prompt.js";

const DATA = join(dirname(fileURLToPath(import.meta.url)), "..", "data");
const V = JSON.parse(readFileSync(join(DATA, "prompt_vectors.json"), "utf8"));

for (const c of V.cases) {
  test(c.name, () => {
    const budget = c.budgets;
    const history = fitHistory(c.history, budget);
    const evidence = fitEvidence(c.results, budget);
    assert.equal(history.length, c.kept_history);
    assert.deepEqual(history, c.history.slice(c.history.length - c.kept_history));
    assert.deepEqual(evidence.map((e) => e.n), c.kept_evidence);
    assert.deepEqual(evidence.map(passageOf), c.passages);
    assert.deepEqual(buildMessages(V.system, history, evidence, c.question, c.notice), c.messages);
  });
}

test("the local engines sample as the gateway does", () => {
  assert.deepEqual({ ...SAMPLING, stop: [...SAMPLING.stop] }, V.sampling);
});
