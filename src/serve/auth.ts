import { createHash, timingSafeEqual } from 'node:crypto';

/** What a receiver reached over a network asks of each request: a bearer token, or a header with a given value. */
export interface Credentials {
  /** `Authorization: Bearer <token>` (the collector's bearertokenauth extension, or `headers:` of its exporters). */
  readonly bearerToken?: string | undefined;
  /** Any header, e.g. `x-api-key: <value>` (`headers:` of the collector's OTLP exporters). */
  readonly header?: { readonly name: string; readonly value: string } | undefined;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const same = (a: string, b: Buffer): boolean => timingSafeEqual(digest(a), b);

/** Checks credentials in constant time (digests of equal length compared); the health endpoints need none. */
export class Authorizer {
  private readonly token: Buffer | undefined;
  private readonly header: { name: string; value: Buffer } | undefined;

  constructor(credentials: Credentials) {
    this.token = credentials.bearerToken !== undefined ? digest(credentials.bearerToken) : undefined;
    this.header = credentials.header ? { name: credentials.header.name.toLowerCase(), value: digest(credentials.header.value) } : undefined;
  }

  get required(): boolean {
    return this.token !== undefined || this.header !== undefined;
  }

  /** `header(name)` reads a request header (lowercase name). */
  check(header: (name: string) => string | undefined): boolean {
    if (this.token) {
      const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header('authorization') ?? '');
      if (!m || !same(m[1] as string, this.token)) return false;
    }
    if (this.header && !same(header(this.header.name) ?? '', this.header.value)) return false;
    return true;
  }
}

/** `name: value` or `name=value` (the form of --require-header). */
export function parseHeader(text: string, where: string): { name: string; value: string } {
  const m = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*[:=]\s*(.*?)\s*$/.exec(text);
  if (!m || m[2] === '') throw new Error(`${where} must be "name: value", such as "x-api-key: s3cret"`);
  return { name: (m[1] as string).toLowerCase(), value: m[2] as string };
}
