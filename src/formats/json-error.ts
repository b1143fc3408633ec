import { Char } from '../fingerprint/chars.js';

/** The first syntax error of a JSON text: where, and what was expected there (never the text itself). */
export interface JsonSyntaxError {
  readonly offset: number;
  readonly problem: string;
}

/**
 * Where is the first JSON syntax error in `text`, and what is wrong there? V8's messages quote
 * the input ("Unexpected token 'o', "nope" is not valid JSON"), which would put a fragment of a
 * trace (an argument, a secret) on stderr, and some carry no position. A validating scan (no
 * values built) gives both in words of its own; undefined if `text` is valid.
 */
export function describeJsonError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  let problem = '';
  const n = text.length;
  const fail = (what: string): false => {
    problem = i >= n ? 'unexpected end of input' : what;
    return false;
  };
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === Char.Space || c === Char.Tab || c === Char.LineFeed || c === Char.CarriageReturn) i++;
      else break;
    }
  };
  const literal = (word: string): boolean => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return true;
    }
    return fail('expected a value');
  };
  const string = (): boolean => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === Char.Quote) {
        i++;
        return true;
      }
      if (c < Char.Space) return fail('control character in a string (escape it)');
      if (c === Char.Backslash) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail('invalid \\u escape in a string');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else {
          i++;
          return fail('invalid escape in a string');
        }
      } else i++;
    }
    return fail('unterminated string');
  };
  const number = (): boolean => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0].length === 0 || m[0] === '-') return fail('expected a value');
    i += m[0].length;
    return true;
  };
  // explicit stack: deeply nested input must not overflow the call stack here either
  const stack: number[] = []; // 1 = object, 2 = array
  const value = (): boolean => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return true;
      }
      stack.push(1);
      return member();
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return true;
      }
      stack.push(2);
      return true; // the element is parsed by the main loop
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    return number();
  };
  const member = (): boolean => {
    ws();
    if (text[i] !== '"') return fail('expected a property name in double quotes');
    if (!string()) return false;
    ws();
    if (text[i] !== ':') return fail("expected ':' after a property name");
    i++;
    return true; // the value is parsed by the main loop
  };
  const error = (): JsonSyntaxError => ({ offset: i, problem });

  if (!value()) return error();
  for (;;) {
    if (stack.length === 0) break;
    // after `[` or `:` (or a comma) a value is due, unless we just closed a container
    const before = stack.length;
    if (!value()) return error();
    if (stack.length > before) continue; // opened a container: parse its first element / member
    // a value finished: expect `,` or the closing bracket of every container it completes
    for (;;) {
      ws();
      const t = stack[stack.length - 1];
      if (t === undefined) break;
      if (text[i] === ',') {
        i++;
        if (t === 1 && !member()) return error();
        break;
      }
      if ((t === 1 && text[i] === '}') || (t === 2 && text[i] === ']')) {
        i++;
        stack.pop();
        continue;
      }
      fail(t === 1 ? "expected ',' or '}' after a property value" : "expected ',' or ']' after an array element");
      return error();
    }
  }
  ws();
  if (i < n) {
    problem = 'unexpected text after the JSON value';
    return error();
  }
  return undefined;
}

/** Offset of the first JSON syntax error in `text`, or -1 if it is valid. */
export function locateJsonError(text: string): number {
  return describeJsonError(text)?.offset ?? -1;
}

/** 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastBreak = -1;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text.charCodeAt(k) === Char.LineFeed) {
      line++;
      lastBreak = k;
    }
  }
  return { line, column: offset - lastBreak };
}
