// The skeleton of a JSON text: its objects and lists where an operation's composite fields are,
// every other value null. A single subgraph's answer is forwarded with its own bytes
// (gateway/forwarded-data.ts); the gateway reads of its `data` only how many objects each field
// returned (gateway/actual-cost.ts). Scanned here in one pass, which also proves the text is one
// JSON value as JSON.parse reads it, instead of parsing every leaf (~2 000 strings and 300 objects
// in betResults(100) with proofs) into objects nobody reads. The scan costs about what JSON.parse
// does (~0.2 ms for those 112 KB); the gain is the garbage it does not make.

/** Thrown on anything JSON.parse would refuse (caught by jsonSkeleton). */
class NotJson extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Up to this many kept names, a key is matched in place (keyAt). */
const IN_PLACE_KEYS = 8;

const isDigit = (c: number) => c >= ZERO && c <= NINE;

/** A backslash and the control characters: a text without any has no escapes, and every string ends at its next quote. */
const ESCAPE_OR_CONTROL = ["\\", ...Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code))];

/**
 * Whether `text` holds a backslash or a control character. One indexOf per character (memchr over a
 * one-byte string): ~23 µs for betResults(100)'s 87 KB, where the regex /[\\\u0000-\u001f]/ took
 * ~68 µs, 40 % of the whole scan (issue 24).
 */
function hasEscapeOrControl(text: string): boolean {
  for (const character of ESCAPE_OR_CONTROL) if (text.includes(character)) return true;
  return false;
}

class Scanner {
  at = 0;
  /** Whether strings may hold escapes or control characters (else each ends at the next quote). */
  private readonly plain: boolean;

  private readonly text: string;
  private readonly keys: ReadonlySet<string>;
  constructor(text: string, keys: ReadonlySet<string>) {
    this.text = text;
    this.keys = keys;
    this.plain = !hasEscapeOrControl(text);
  }

  private space(): void {
    const { text } = this;
    let c = text.charCodeAt(this.at);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++this.at);
  }

  /** The value at `at` (its skeleton when `keep`, else null); `at` moves past it. */
  value(keep: boolean): unknown {
    this.space();
    const c = this.text.charCodeAt(this.at);
    if (c === OPEN_OBJECT) return this.object(keep);
    if (c === OPEN_LIST) return this.list(keep);
    if (c === QUOTE) this.string();
    else if (c === MINUS || isDigit(c)) this.number();
    else this.literal();
    return null;
  }

  private object(keep: boolean): Record<string, unknown> | null {
    // Without a prototype: a key `__proto__` is an own key, as JSON.parse makes it.
    const skeleton: Record<string, unknown> | null = keep ? Object.create(null) : null;
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === CLOSE_OBJECT) {
      this.at++;
      return skeleton;
    }
    for (;;) {
      this.space();
      if (this.text.charCodeAt(this.at) !== QUOTE) throw new NotJson();
      const start = this.at;
      const escaped = this.string();
      // A kept key is looked up without slicing it out: most keys of a kept object are leaves.
      const key = skeleton && (escaped ? this.keyOf(JSON.parse(this.text.slice(start, this.at)) as string) : this.keyAt(start + 1, this.at - 1));
      this.space();
      if (this.text.charCodeAt(this.at++) !== COLON) throw new NotJson();
      const kept = key !== undefined && key !== null;
      const value = this.value(kept);
      // The last of repeated keys wins, as in JSON.parse.
      if (kept && skeleton) skeleton[key] = value;
      this.space();
      const next = this.text.charCodeAt(this.at++);
      if (next === CLOSE_OBJECT) return skeleton;
      if (next !== COMMA) throw new NotJson();
    }
  }

  /**
   * The kept key that is the text from `start` to `end`, if any. Compared in place against a few
   * kept names; an operation with many (aliases) pays one slice and one lookup per key instead,
   * never keys × names.
   */
  private keyAt(start: number, end: number): string | undefined {
    if (this.keys.size > IN_PLACE_KEYS) return this.keyOf(this.text.slice(start, end));
    for (const key of this.keys) if (key.length === end - start && this.text.startsWith(key, start)) return key;
    return undefined;
  }

  private keyOf(key: string): string | undefined {
    return this.keys.has(key) ? key : undefined;
  }

  private list(keep: boolean): unknown[] | null {
    const skeleton: unknown[] | null = keep ? [] : null;
    this.at++;
    this.space();
    if (this.text.charCodeAt(this.at) === CLOSE_LIST) {
      this.at++;
      return skeleton;
    }
    for (;;) {
      const item = this.value(keep);
      skeleton?.push(item);
      this.space();
      const next = this.text.charCodeAt(this.at++);
      if (next === CLOSE_LIST) return skeleton;
      if (next !== COMMA) throw new NotJson();
    }
  }

  /** Moves past the string at `at`; whether it holds an escape. */
  private string(): boolean {
    const { text } = this;
    if (this.plain) {
      const end = text.indexOf('"', this.at + 1);
      if (end < 0) throw new NotJson();
      this.at = end + 1;
      return false;
    }
    let escaped = false;
    let i = this.at + 1;
    for (;;) {
      const c = text.charCodeAt(i++);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        const e = text.charCodeAt(i++);
        if (e === 0x75) {
          // \uXXXX
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i, i + 4))) throw new NotJson();
          i += 4;
        } else if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) throw new NotJson();
      } else if (c < 0x20 || Number.isNaN(c)) throw new NotJson(); // a control character, or the text ended
    }
    this.at = i;
    return escaped;
  }

  /** -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
  private number(): void {
    const { text } = this;
    let i = this.at;
    if (text.charCodeAt(i) === MINUS) i++;
    if (text.charCodeAt(i) === ZERO) i++;
    else if (isDigit(text.charCodeAt(i))) while (isDigit(text.charCodeAt(i))) i++;
    else throw new NotJson();
    if (text.charCodeAt(i) === DOT) {
      if (!isDigit(text.charCodeAt(++i))) throw new NotJson();
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      const sign = text.charCodeAt(++i);
      if (sign === PLUS || sign === MINUS) i++;
      if (!isDigit(text.charCodeAt(i))) throw new NotJson();
      while (isDigit(text.charCodeAt(i))) i++;
    }
    this.at = i;
  }

  private literal(): void {
    for (const word of ["true", "false", "null"]) {
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return;
      }
    }
    throw new NotJson();
  }
}

/**
 * The skeleton of the JSON value that starts at `text[from]` — objects (without prototype) keeping
 * only the members named in `keys`, lists keeping every position, everything else null — and
 * where the value ends (the index after its last character). Undefined when the text there is not a
 * JSON value as JSON.parse reads it.
 */
export function jsonSkeleton(text: string, keys: ReadonlySet<string>, from = 0): { skeleton: unknown; end: number } | undefined {
  const scanner = new Scanner(text, keys);
  scanner.at = from;
  try {
    const skeleton = scanner.value(true);
    return { skeleton, end: scanner.at };
  } catch (error) {
    // Not JSON, or nested deeper than the stack (JSON.parse may read that; the caller parses instead).
    if (error instanceof NotJson || error instanceof RangeError || error instanceof SyntaxError) return undefined;
    throw error;
  }
}
