import { normalizeKey } from '../fingerprint/volatile.js';

/**
 * Opt-in previews of a looping call's arguments, for people who want to see on the event what the
 * agent kept asking. Off by default: loopwatch otherwise writes only hashes, names and counts.
 *
 * What a preview holds: the arguments as compact JSON (or the text, when they are not JSON),
 * with the value of every member whose name looks like a credential replaced by `[redacted]`,
 * strings that look like credentials (bearer and basic tokens, `sk-…` keys, JWTs, long hex or
 * base64 runs) replaced the same way, and everything cut at `maxLength` characters. Redaction is
 * a best effort on names and shapes, not a guarantee: a secret under an innocent name in free
 * text can get through, so leave previews off where arguments may hold secrets you cannot name.
 */
export interface ArgumentPreviewOptions {
  /** Longest preview, in characters (default 120, at most 1000); longer ones end with `…`. */
  readonly maxLength?: number;
  /** More member names to redact (matched like volatile keys: case, `_`, `-`, `.` ignored). */
  readonly redactKeys?: readonly string[];
}

export const DEFAULT_PREVIEW_LENGTH = 120;
const MAX_PREVIEW_LENGTH = 1000;
export const REDACTED = '[redacted]';

/** Member names (normalised) that are credentials wherever they appear in the name. */
const SECRET_NAME_PARTS = [
  'password', 'passwd', 'passphrase', 'secret', 'token', 'apikey', 'authorization', 'cookie', 'credential',
  'privatekey', 'accesskey', 'signature', 'session', 'bearer', 'clientsecret', 'creditcard', 'cardnumber',
];
/** Member names (normalised) that are credentials only as a whole name. */
const SECRET_NAMES = ['auth', 'key', 'pwd', 'pin', 'cvv', 'cvc', 'ssn', 'otp', 'jwt'];

/** Text that looks like a credential whatever its member is called. */
const SECRET_TEXT =
  /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}|\b(?:sk|pk|rk|ghp|gho|xox[abp]|AKIA)[-_A-Za-z0-9]{12,}|\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*|\b[0-9a-fA-F]{32,}\b|[A-Za-z0-9+/]{40,}={0,2}/g;

/** How deep and how many members a preview walks: it is cut at `maxLength` long before anyway. */
const MAX_DEPTH = 16;

export interface ResolvedPreview {
  readonly maxLength: number;
  readonly isSecretName: (name: string) => boolean;
}

export function resolvePreview(option: boolean | ArgumentPreviewOptions | undefined): ResolvedPreview | undefined {
  if (option === undefined || option === false) return undefined;
  const o = option === true ? {} : option;
  const maxLength = Math.max(1, Math.min(MAX_PREVIEW_LENGTH, Math.floor(o.maxLength ?? DEFAULT_PREVIEW_LENGTH)));
  const extra = new Set((o.redactKeys ?? []).map(normalizeKey));
  const exact = new Set(SECRET_NAMES);
  return {
    maxLength,
    isSecretName: (name) => {
      const n = normalizeKey(name);
      return exact.has(n) || extra.has(n) || SECRET_NAME_PARTS.some((part) => n.includes(part));
    },
  };
}

function redactText(text: string): string {
  SECRET_TEXT.lastIndex = 0;
  return text.replace(SECRET_TEXT, REDACTED);
}

/** Appends to `out` until it holds more than `limit` characters; true once it is full. */
class Bounded {
  text = '';
  constructor(private readonly limit: number) {}
  add(s: string): boolean {
    this.text += s.length > this.limit ? s.slice(0, this.limit + 1) : s;
    return this.full;
  }
  get full(): boolean {
    return this.text.length > this.limit;
  }
}

function write(v: unknown, out: Bounded, p: ResolvedPreview, depth: number, path: Set<object>): void {
  if (out.full) return;
  if (typeof v === 'string') {
    out.add(JSON.stringify(redactText(v.length > p.maxLength * 2 ? v.slice(0, p.maxLength * 2) : v)));
    return;
  }
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) {
    out.add(String(v));
    return;
  }
  if (typeof v !== 'object' || depth >= MAX_DEPTH || path.has(v)) {
    out.add(typeof v === 'object' ? '"…"' : 'null');
    return;
  }
  path.add(v);
  if (Array.isArray(v)) {
    out.add('[');
    for (let i = 0; i < v.length && !out.full; i++) {
      if (i > 0) out.add(',');
      write(v[i], out, p, depth + 1, path);
    }
    out.add(']');
  } else {
    out.add('{');
    let first = true;
    for (const key of Object.keys(v)) {
      if (out.full) break;
      if (!first) out.add(',');
      first = false;
      out.add(`${JSON.stringify(key)}:`);
      if (p.isSecretName(key)) out.add(JSON.stringify(REDACTED));
      else write((v as Record<string, unknown>)[key], out, p, depth + 1, path);
    }
    out.add('}');
  }
  path.delete(v);
}

/**
 * The preview of one call's raw arguments (a JSON string, a structured value or other text), or
 * undefined when there is nothing to show. Never throws: a value that cannot be read gives none.
 */
export function argumentPreview(args: unknown, p: ResolvedPreview): string | undefined {
  try {
    let value = args;
    if (typeof args === 'string') {
      const t = args.trim();
      if (t.startsWith('{') || t.startsWith('[')) {
        try {
          value = JSON.parse(t.length > 1 << 20 ? t.slice(0, 1 << 20) : t) as unknown;
        } catch {
          value = args;
        }
      }
    }
    const out = new Bounded(p.maxLength);
    if (typeof value === 'string') out.add(redactText(value.length > p.maxLength * 2 ? value.slice(0, p.maxLength * 2) : value));
    else write(value, out, p, 0, new Set());
    if (out.text.length === 0) return undefined;
    return out.text.length > p.maxLength ? `${out.text.slice(0, p.maxLength - 1)}…` : out.text;
  } catch {
    return undefined;
  }
}
