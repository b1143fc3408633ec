/**
 * Where is the first JSON syntax error in `text`? V8 reports a position for most errors but not
 * all ("Unexpected token 'o', "nope" is not valid JSON"), and a file error must name its line.
 * A validating scan (no values built); returns the offset of the error, or -1 if `text` is valid.
 */
export function locateJsonError(text: string): number {
  let i = 0;
  const n = text.length;
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const literal = (word: string): boolean => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return true;
    }
    return false;
  };
  const string = (): boolean => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return true;
      }
      if (c < 32) return false;
      if (c === 92) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return false;
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else {
          i++;
          return false;
        }
      } else i++;
    }
    return false;
  };
  const number = (): boolean => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0].length === 0 || m[0] === '-') return false;
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
    if (text[i] !== '"' || !string()) return false;
    ws();
    if (text[i] !== ':') return false;
    i++;
    return true; // the value is parsed by the main loop
  };

  if (!value()) return i;
  for (;;) {
    if (stack.length === 0) break;
    // after `[` or `:` (or a comma) a value is due, unless we just closed a container
    const before = stack.length;
    if (!value()) return i;
    if (stack.length > before) continue; // opened a container: parse its first element / member
    // a value finished: expect `,` or the closing bracket of every container it completes
    for (;;) {
      ws();
      const t = stack[stack.length - 1];
      if (t === undefined) break;
      if (text[i] === ',') {
        i++;
        if (t === 1 && !member()) return i;
        break;
      }
      if ((t === 1 && text[i] === '}') || (t === 2 && text[i] === ']')) {
        i++;
        stack.pop();
        continue;
      }
      return i;
    }
  }
  ws();
  return i < n ? i : -1;
}

/** 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastBreak = -1;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text.charCodeAt(k) === 10) {
      line++;
      lastBreak = k;
    }
  }
  return { line, column: offset - lastBreak };
}
