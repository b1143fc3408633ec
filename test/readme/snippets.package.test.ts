/**
 * Every runnable snippet of README.md and docs/*.md (a fenced block tagged `ts run`, see
 * snippets.ts) runs as written, the way a user would run it: in a project of its own
 * (test/readme/project: its lockfile, the packed loopwatch, the packages the snippets import),
 * with `node --import tsx`, its OTLP exporters pointed at a receiver on loopback. It must exit 0,
 * print what its `expect` lines say, and export spans carrying the events its `expect-exported`
 * lines name.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeTraceRequest, encodeTraceResponse, encodingOf } from '../../src/formats/protobuf/codec.js';
import { snippetsOf, type Snippet } from './snippets.js';

const REPO = join(import.meta.dirname, '..', '..');
const PROJECT = join(import.meta.dirname, 'project');
const RUN_DIR = join(PROJECT, '.snippets');
const PRELUDES = join(import.meta.dirname, 'preludes');

const FILES = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const SNIPPETS = FILES.flatMap((f) => snippetsOf(REPO, f));

/** Span events received over OTLP/HTTP (protobuf or JSON), by name. */
interface Receiver {
  readonly url: string;
  readonly events: string[];
  readonly spans: number;
  clear(): void;
  close(): Promise<void>;
}

async function otlpReceiver(): Promise<Receiver> {
  const state = { events: [] as string[], spans: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const encoding = encodingOf(req.headers['content-type']) ?? 'protobuf';
      if (req.url?.endsWith('/v1/traces')) {
        try {
          const request = decodeTraceRequest(new Uint8Array(Buffer.concat(chunks)), encoding);
          for (const rs of request.resourceSpans) {
            for (const ss of rs.scopeSpans) {
              for (const span of ss.spans) {
                state.spans++;
                state.events.push(...span.events.map((e) => e.name));
              }
            }
          }
        } catch {
          res.writeHead(400).end();
          return;
        }
        res.writeHead(200, { 'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf' }).end(Buffer.from(encodeTraceResponse(encoding)));
        return;
      }
      res.writeHead(200).end(); // metrics, logs, anything else: accepted and ignored
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get events() {
      return state.events;
    },
    get spans() {
      return state.spans;
    },
    clear: () => {
      state.events = [];
      state.spans = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function run(file: string, receiver: Receiver): Promise<{ code: number | null; output: string }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(OTEL_|LOOPWATCH_|NODE_OPTIONS|VITEST|TRACELOOP_|PHOENIX_)/.test(k)) env[k] = v;
  Object.assign(env, {
    // Every exporter a snippet may start sends to the receiver; nothing leaves the machine.
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_LOGS_EXPORTER: 'none',
    PHOENIX_COLLECTOR_ENDPOINT: receiver.url,
    TRACELOOP_BASE_URL: receiver.url,
    TRACELOOP_API_KEY: 'local-test',
    TRACELOOP_SYNC_ENABLED: 'false',
  });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: PROJECT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} timed out; output:\n${output}`));
    }, 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

let receiver: Receiver;

beforeAll(async () => {
  // The project installs the packed loopwatch (npm pack of the built dist/) like the SDK matrix cells.
  execFileSync('bash', [join(REPO, 'test', 'matrix', 'prepare.sh'), '../readme/project'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 900_000 });
  mkdirSync(RUN_DIR, { recursive: true });
  receiver = await otlpReceiver();
}, 900_000);

afterAll(async () => {
  await receiver?.close();
  rmSync(RUN_DIR, { recursive: true, force: true });
});

describe('runnable snippets of the README and docs', () => {
  it('finds the snippets the README promises to run', () => {
    const where = SNIPPETS.map((s) => s.where.split(':')[0]);
    expect(where.filter((w) => w === 'README.md').length).toBeGreaterThanOrEqual(2);
    expect(where).toContain('docs/instrumentations.md');
    for (const s of SNIPPETS) expect(s.expect.length + s.expectExported.length, `${s.where}: says what it shows`).toBeGreaterThan(0);
  });

  it.each(SNIPPETS.map((s) => [s.where, s] as const))('%s runs as written', async (where, snippet: Snippet) => {
    const { code, output } = await runSnippet(snippet);
    expect(code, output).toBe(0);
    for (const text of snippet.expect) expect(output, `${where}: expected output`).toContain(text);
    for (const event of snippet.expectExported) expect(receiver.events, `${where}: exported events (${receiver.spans} spans received)`).toContain(event);
  }, 120_000);
});

async function runSnippet(snippet: Snippet): Promise<{ code: number | null; output: string }> {
  const file = join(RUN_DIR, `${snippet.where.replace(/[/:.]/g, '_')}.ts`);
  const prelude = snippet.prelude ? readFileSync(join(PRELUDES, `${snippet.prelude}.ts`), 'utf8') : '';
  writeFileSync(file, `${prelude}${snippet.code}`);
  receiver.clear();
  return run(file, receiver);
}
