// The browser's control-text rule (site_knowledge/browser/control_text.js) against the shared
// vectors of site_knowledge/gateway/control_text.py (tests/data/control_text_vectors.json).
// Run by tests/test_browser_grounding.py (node --test).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { BREAK, neutralise, neutraliseTurn } from "../../site_knowledge/browser/control_text.js";

const DATA = join(dirname(fileURLToPath(import.meta.url)), "..", "data");
const V = JSON.parse(readFileSync(join(DATA, "control_text_vectors.json"), "utf8"));

test("the break is Python's", () => assert.equal(BREAK, V.break));

for (const c of V.vectors) {
  test(c.name, () => {
    assert.equal(neutralise(c.input), c.output);
    assert.equal(neutralise(c.output), c.output, "applying it twice changes nothing more");
  });
}

test("a history turn's question and answer are both neutralised", () => {
  const [turn] = V.vectors;
  assert.deepEqual(neutraliseTurn({ question: turn.input, answer: turn.input }), {
    question: turn.output,
    answer: turn.output,
  });
});
