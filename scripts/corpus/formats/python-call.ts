/**
 * Reads one Python call expression with literal arguments, `name(key=value, ...)`, as BFCL's
 * prompt-mode handlers hand decoded calls to the executor (values in Python `repr` form:
 * quoted strings with escapes, numbers, `True` / `False` / `None`, lists, tuples, dicts). Returns
 * the function name and its keyword arguments as a JSON object, or undefined when the text is
 * not such a call (the caller then keeps the raw text).
 */

export interface PythonCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

class Reader {
  private at = 0;
  constructor(private readonly s: string) {}

  done(): boolean {
    this.space();
    return this.at >= this.s.length;
  }

  space(): void {
    while (this.at < this.s.length && /\s/.test(this.s[this.at] ?? '')) this.at++;
  }

  eat(ch: string): boolean {
    this.space();
    if (this.s.startsWith(ch, this.at)) {
      this.at += ch.length;
      return true;
    }
    return false;
  }

  expect(ch: string): void {
    if (!this.eat(ch)) throw new SyntaxError(`expected ${ch} at ${this.at}`);
  }

  name(): string {
    this.space();
    const m = /^[A-Za-z_][\w.]*/.exec(this.s.slice(this.at));
    if (!m) throw new SyntaxError(`expected a name at ${this.at}`);
    this.at += m[0].length;
    return m[0];
  }

  value(): unknown {
    this.space();
    const c = this.s[this.at];
    if (c === '"' || c === "'") return this.string();
    if (c === '[' || c === '(') return this.sequence(c === '[' ? ']' : ')');
    if (c === '{') return this.dict();
    const m = /^(?:-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+)|True|False|None)/.exec(this.s.slice(this.at));
    if (!m) throw new SyntaxError(`expected a literal at ${this.at}`);
    this.at += m[0].length;
    if (m[0] === 'True') return true;
    if (m[0] === 'False') return false;
    if (m[0] === 'None') return null;
    return Number(m[0]);
  }

  private sequence(close: string): unknown[] {
    this.at++;
    const out: unknown[] = [];
    while (!this.eat(close)) {
      out.push(this.value());
      if (!this.eat(',')) {
        this.expect(close);
        break;
      }
    }
    return out;
  }

  private dict(): Record<string, unknown> {
    this.at++;
    const out: Record<string, unknown> = {};
    while (!this.eat('}')) {
      const k = this.value();
      this.expect(':');
      out[String(k)] = this.value();
      if (!this.eat(',')) {
        this.expect('}');
        break;
      }
    }
    return out;
  }

  private string(): string {
    const quote = this.s[this.at] ?? '"';
    this.at++;
    let out = '';
    for (;;) {
      const c = this.s[this.at];
      if (c === undefined) throw new SyntaxError('unterminated string');
      this.at++;
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.s[this.at++] ?? '';
      const hex = (n: number): string => {
        const code = Number.parseInt(this.s.slice(this.at, this.at + n), 16);
        this.at += n;
        return String.fromCodePoint(code);
      };
      if (e === 'n') out += '\n';
      else if (e === 't') out += '\t';
      else if (e === 'r') out += '\r';
      else if (e === 'x') out += hex(2);
      else if (e === 'u') out += hex(4);
      else if (e === 'U') out += hex(8);
      else if (e === '\n') continue;
      else out += e;
    }
  }
}

export function parsePythonCall(text: string): PythonCall | undefined {
  try {
    const r = new Reader(text);
    const name = r.name();
    r.expect('(');
    const args: Record<string, unknown> = {};
    while (!r.eat(')')) {
      const key = r.name();
      r.expect('=');
      args[key] = r.value();
      if (!r.eat(',')) {
        r.expect(')');
        break;
      }
    }
    return r.done() ? { name, args } : undefined;
  } catch {
    return undefined;
  }
}

/** One Python literal in `repr` form (a dict, list, string, number, ...) as JSON, or undefined when the text is not one. */
export function parsePythonLiteral(text: string): { readonly value: unknown } | undefined {
  try {
    const r = new Reader(text);
    const value = r.value();
    return r.done() ? { value } : undefined;
  } catch {
    return undefined;
  }
}
