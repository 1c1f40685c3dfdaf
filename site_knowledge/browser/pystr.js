// Python's text semantics in JavaScript, so that the twins of Python modules (grounding.js,
// prompt.js) behave identically on any text: Python's regular expressions translated to
// Unicode-aware JavaScript ones, str.strip/split, str.isdigit, int/float of Unicode digits,
// and lengths in code points. Checked on every assigned Unicode 14 character (Python 3.11):
// `[\p{L}\p{N}_]` is Python's `\w`, `\p{Uppercase}` is str.isupper() of one character.

const WORD_CHAR = String.raw`\p{L}\p{N}_`;
/** Python's `\s` and str.isspace() (JavaScript's `\s` adds U+FEFF and lacks U+001C-U+001F, U+0085). */
const SPACE_CHARS = String.raw`\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`;
/** Numeric_Type=Digit beyond \p{Nd} (superscripts, circled digits, ...): str.isdigit() is true. */
const OTHER_DIGITS = String.raw`\u{b2}-\u{b3}\u{b9}\u{1369}-\u{1371}\u{19da}\u{2070}\u{2074}-\u{2079}\u{2080}-\u{2089}\u{2460}-\u{2468}\u{2474}-\u{247c}\u{2488}-\u{2490}\u{24ea}\u{24f5}-\u{24fd}\u{24ff}\u{2776}-\u{277e}\u{2780}-\u{2788}\u{278a}-\u{2792}\u{10a40}-\u{10a43}\u{10e60}-\u{10e68}\u{11052}-\u{1105a}\u{1f100}-\u{1f10a}`;

const IS_SPACE = new RegExp(`[${SPACE_CHARS}]`, "u");
const IS_DIGIT = new RegExp(`^[\\p{Nd}${OTHER_DIGITS}]$`, "u");
const IS_DECIMAL = /^\p{Nd}$/u;
const IS_UPPER = /^\p{Uppercase}$/u;
const IS_ALPHA = /^\p{L}$/u;
const DECIMAL = /\p{Nd}/gu;
const OUTSIDE = {
  b: `(?:(?<=[${WORD_CHAR}])(?![${WORD_CHAR}])|(?<![${WORD_CHAR}])(?=[${WORD_CHAR}]))`,
  w: `[${WORD_CHAR}]`,
  W: `[^${WORD_CHAR}]`,
  s: `[${SPACE_CHARS}]`,
  S: `[^${SPACE_CHARS}]`,
  d: String.raw`\p{Nd}`,
  D: String.raw`\P{Nd}`,
};
const INSIDE = { w: WORD_CHAR, s: SPACE_CHARS, d: String.raw`\p{Nd}` };
const JS_ESCAPABLE = "^$\\.*+?()[]{}|/";
// Under re.IGNORECASE Python also matches these to ASCII letters (sre's simple lower case and
// its equivalences); JavaScript's case folding does not. Same length, so offsets hold.
const PYTHON_CASELESS = /[\u0130\u0131]/g;

/**
 * A JavaScript RegExp that matches what Python's `re.compile(source, flags)` matches.
 *
 * Translates `\b \w \W \s \S \d \D` and `$` to their Unicode meaning in Python and the class
 * `[^\W_]`; any other construct is passed through, so a pattern that uses something else
 * Python-only fails to compile or fails the shared vectors rather than drifting quietly.
 * @param {string} source the Python pattern, verbatim
 * @param {{ignoreCase?: boolean, global?: boolean, fullmatch?: boolean}} options
 */
export function pyRegex(source, { ignoreCase = false, global = false, fullmatch = false } = {}) {
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      const next = source[++i];
      if (inClass && next === "W" && out.endsWith("[^") && source[i + 1] === "_") {
        out = out.slice(0, -2) + `[\\p{L}\\p{N}`; // [^\W_]: word characters but "_"
        i += 1;
      } else if (inClass && next in INSIDE) out += INSIDE[next];
      else if (inClass && "WSDb".includes(next)) throw new Error(`pyRegex: \\${next} in a class: ${source}`);
      else if (!inClass && next in OUTSIDE) out += OUTSIDE[next];
      else if (!inClass && next === "B") throw new Error(`pyRegex: \\B is not translated: ${source}`);
      else if (/[\p{L}\p{N}]/u.test(next) || JS_ESCAPABLE.includes(next) || (inClass && next === "-")) out += c + next;
      else out += next; // Python escapes any punctuation; JavaScript's u mode only its syntax
    } else if (inClass) {
      if (c === "]") inClass = false;
      out += c;
    } else if (c === "[") {
      inClass = true;
      out += c;
      if (source[i + 1] === "^") out += source[++i];
      if (source[i + 1] === "]") out += "\\" + source[++i]; // a leading "]" is literal in Python
    } else if (c === "$") {
      out += String.raw`(?=\n?$)`; // Python's $ also matches before a final newline
    } else {
      out += c;
    }
  }
  if (fullmatch) out = `^(?:${out})$`; // pattern.fullmatch(text): JavaScript's $ is the very end
  return new RegExp(out, "u" + (ignoreCase ? "i" : "") + (global ? "g" : ""));
}

/** Python's `pattern.search(text)`, with IGNORECASE's extra equivalences (offsets are the
 * text's: each replaced character is one UTF-16 unit, as is "i"); null when nothing matches. */
export function pyExec(regex, text) {
  regex.lastIndex = 0;
  return regex.exec(regex.ignoreCase ? text.replace(PYTHON_CASELESS, "i") : text);
}

/** Python's `pattern.search(text) is not None`, with IGNORECASE's extra equivalences. */
export function pySearch(regex, text) {
  return pyExec(regex, text) !== null;
}

export function isSpace(char) {
  return IS_SPACE.test(char);
}

/** str.strip() / lstrip() / rstrip() with Python's white space. */
export function strip(text) {
  return rstrip(lstrip(text));
}

export function lstrip(text) {
  let start = 0;
  while (start < text.length && isSpace(text[start])) start += 1;
  return text.slice(start);
}

export function rstrip(text) {
  let end = text.length;
  while (end > 0 && isSpace(text[end - 1])) end -= 1;
  return text.slice(0, end);
}

/** str.split() without arguments: runs of Python white space, no empty pieces. */
export function splitSpace(text) {
  return text.split(new RegExp(`[${SPACE_CHARS}]+`, "u")).filter(Boolean);
}

/** Code points of a string (Python's indexing unit). */
export function chars(text) {
  return Array.from(text);
}

/** len(text) in Python: code points, not UTF-16 units. */
export function length(text) {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/** str.isdigit() of one character (Numeric_Type Decimal or Digit). */
export function isDigit(char) {
  return IS_DIGIT.test(char);
}

/** str.isupper() of one character (Lu and Other_Uppercase). */
export function isUpper(char) {
  return IS_UPPER.test(char);
}

/** str.isalpha() of one character. */
export function isAlpha(char) {
  return IS_ALPHA.test(char);
}

function decimalValue(char) {
  // Unicode lays decimal digits out in runs of whole sets from 0 to 9: count back to the run's
  // start (a run may hold several sets, e.g. the mathematical digits).
  let code = char.codePointAt(0);
  let steps = 0;
  while (IS_DECIMAL.test(String.fromCodePoint(code - 1))) {
    code -= 1;
    steps += 1;
  }
  return steps % 10;
}

// A mark of the highest and of the lowest non-zero canonical combining class (240, 1).
const HIGHEST_CLASS = "\u0345";
const LOWEST_CLASS = "\u0334";

/**
 * unicodedata.combining(char) != 0, for a character that is its own NFD (as every character of
 * an NFKD text is). JavaScript has no property for the canonical combining class, but NFD
 * orders marks by it: a character of a non-zero class moves before a mark of class 240 or
 * behind a mark of class 1, one of class 0 never moves.
 */
export function isCombining(char) {
  const before = `a${HIGHEST_CLASS}${char}`;
  const after = `a${char}${LOWEST_CLASS}`;
  return before.normalize("NFD") !== before || after.normalize("NFD") !== after;
}

/** Decimal digits of any script as ASCII, as int() and float() read them. */
export function asciiDigits(text) {
  return text.replace(DECIMAL, (d) => (d >= "0" && d <= "9" ? d : String(decimalValue(d))));
}
