// Every pattern of grounding_rules.json compiled as grounding.js compiles it (pyRegex), and the
// [start, end] of each match in the sample texts given as JSON (tests/test_grounding_rules.py).
import RULES from "../../site_knowledge/browser/grounding_rules.json" with { type: "json" };
import { pyRegex } from "../../site_knowledge/browser/pystr.js";

const samples = JSON.parse(process.argv[2]);
const matches = Object.fromEntries(Object.entries(RULES.patterns).map(([name, [source, ignoreCase]]) => {
  const regex = pyRegex(source, { ignoreCase, global: true });
  return [name, samples.flatMap((s) => [...s.matchAll(regex)].map((m) => [m.index, m.index + m[0].length]))];
}));
console.log(JSON.stringify(matches));
