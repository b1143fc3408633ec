import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { originalsDir } from './files.js';
import { markupNames, RunPseudonymizer } from './pseudonymize.js';
import type { CorpusCall, CorpusRun } from './run.js';

/** The local secret behind the pseudonyms: created once next to the originals, never committed. */
export function pseudonymKey(): Buffer {
  const path = join(originalsDir(), 'pseudonym.key');
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  }
  return Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
}

/**
 * The run with every argument, result, error text, call id and user message pseudonymized (one
 * map per run: a user who repeats a message repeats its pseudonym); the model's words dropped.
 */
export function pseudonymizeRun(run: CorpusRun, key: Buffer): CorpusRun {
  const times = run.turns.flatMap((t) => [t.start, t.end]);
  const texts = run.turns.flatMap((t) => [
    ...(t.kind === 'user' && t.text !== undefined ? [t.text] : []),
    ...t.calls.flatMap((c) => [typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? null), c.result ?? '', c.error ?? '']),
  ]);
  const p = new RunPseudonymizer({ key, runId: `${run.source}\0${run.id}`, from: Math.min(...times), to: Math.max(...times), markupNames: markupNames(texts) });
  const call = (c: CorpusCall): CorpusCall => ({
    ...c,
    arguments: typeof c.arguments === 'string' ? p.text(c.arguments) : p.value(c.arguments),
    ...(c.result !== undefined ? { result: p.text(c.result) } : {}),
    ...(c.error !== undefined ? { error: p.text(c.error) } : {}),
    ...(c.id !== undefined ? { id: p.text(c.id) } : {}),
  });
  return {
    ...run,
    turns: run.turns.map(({ text, ...t }) => ({
      ...t,
      ...(t.kind === 'user' && text !== undefined ? { text: p.text(text) } : {}),
      calls: t.calls.map(call),
    })),
  };
}
