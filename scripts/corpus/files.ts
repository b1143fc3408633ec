import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, brotliDecompressSync, constants, gunzipSync, gzipSync } from 'node:zlib';

/** Where the corpus lives in the repository, and where the (gitignored) originals live. */

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CORPUS_DIR = join(REPO_ROOT, 'test', 'fixtures', 'real');
export const LABELS_DIR = join(CORPUS_DIR, 'labels');
export const MANIFEST = join(CORPUS_DIR, 'sources.json');

/** Originals stay out of git: `.tmp/` is ignored. `LOOPWATCH_ORIGINALS` moves them. */
export function originalsDir(): string {
  return process.env.LOOPWATCH_ORIGINALS ?? join(REPO_ROOT, '.tmp', 'real-originals');
}

/**
 * Pseudonymized OTLP/JSON Lines of one corpus, brotli-compressed (committed): brotli's large
 * window finds the repetitions of a run (a file viewed again) that gzip's 32 KiB window misses,
 * about a quarter smaller here.
 */
export function corpusFile(id: string): string {
  return join(CORPUS_DIR, `${id}.otlp.jsonl.br`);
}

/** The same runs as OTLP/JSON Lines before pseudonymization (never committed). */
export function originalOtlpFile(id: string): string {
  return join(originalsDir(), `${id}.otlp.jsonl.gz`);
}

/** Converted runs before pseudonymization (never committed). */
export function originalRunsFile(id: string): string {
  return join(originalsDir(), `${id}.runs.jsonl.gz`);
}

export function labelsFile(id: string): string {
  return join(LABELS_DIR, `${id}.json`);
}

/** JSON Lines, compressed by the file's extension: `.br` brotli, `.gz` gzip. */
export function writeLines(path: string, lines: Iterable<string>): void {
  mkdirSync(dirname(path), { recursive: true });
  const text = Buffer.from([...lines].join('\n') + '\n');
  const packed = path.endsWith('.br')
    ? brotliCompressSync(text, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: text.length } })
    : gzipSync(text, { level: 9 });
  writeFileSync(path, packed);
}

export function readLines(path: string): string[] {
  const raw = readFileSync(path);
  const text = path.endsWith('.br') ? brotliDecompressSync(raw) : path.endsWith('.gz') ? gunzipSync(raw) : raw;
  return text.toString('utf8').split('\n').filter((l) => l.trim() !== '');
}

export function exists(path: string): boolean {
  return existsSync(path);
}
