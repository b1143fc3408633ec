import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import semver from 'semver';

export const REPO = join(import.meta.dirname, '..', '..');
export const MATRIX = join(REPO, 'test', 'matrix');

/**
 * The Node a cell runs on: `20` the project's own, `22` a cached Node 22, `floor` the oldest Node
 * the package allows (`engines.node`), cached too (scripts/setup/30-node.sh).
 */
export type CellNode = '20' | '22' | 'floor';

export interface CellInfo {
  readonly name: string;
  readonly dir: string;
  readonly node: CellNode;
  readonly description: string;
  /** The test file that drives this cell when it is not a shared-scenario cell (`loopwatchMatrix.suite`). */
  readonly suite: string | undefined;
  /** Installed version of each dependency, read from the cell's node_modules. */
  installed(pkg: string): string;
}

export function cells(): CellInfo[] {
  return readdirSync(MATRIX)
    .filter((d) => existsSync(join(MATRIX, d, 'package.json')))
    .sort()
    .map((name) => {
      const dir = join(MATRIX, name);
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { description: string; loopwatchMatrix: { node: CellNode; suite?: string } };
      return {
        name,
        dir,
        node: pkg.loopwatchMatrix.node,
        description: pkg.description,
        suite: pkg.loopwatchMatrix.suite,
        installed: (p: string) => (JSON.parse(readFileSync(join(dir, 'node_modules', p, 'package.json'), 'utf8')) as { version: string }).version,
      };
    });
}

/** The oldest Node the package allows: the least version `engines.node` accepts (semver, as in test/package/engines.unit.test.ts). */
export const NODE_FLOOR = semver.minVersion((JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node)?.version ?? '';

/** The Node binaries the cells run on, by `CellNode`. */
export interface NodeBinaries {
  readonly node22: string;
  readonly nodeFloor: string;
}

/** Installs what the cells need (see prepare.sh); slow only on a cold machine. */
export function prepare(...only: string[]): NodeBinaries {
  execFileSync('bash', [join(MATRIX, 'prepare.sh'), ...only], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 900_000 });
  const node = (which: '22' | 'floor'): string => execFileSync('bash', [join(REPO, 'scripts', 'setup', '30-node.sh'), which], { encoding: 'utf8', timeout: 600_000 }).trim();
  return { node22: node('22'), nodeFloor: node('floor') };
}

/** The binary a cell runs on. */
export function nodeOf(cell: CellInfo, binaries: NodeBinaries): string {
  return cell.node === '22' ? binaries.node22 : cell.node === 'floor' ? binaries.nodeFloor : process.execPath;
}

/** Does `version` (as `process.versions.node` says it) fit the cell's Node? */
export function isCellNode(cell: CellInfo, version: string): boolean {
  return cell.node === 'floor' ? version === NODE_FLOOR : version.startsWith(`${cell.node}.`);
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The last line of stdout, parsed. */
  json<T>(): T;
}

/** Runs `node args...` in a cell with a clean OTel environment plus `env`. */
export function runNode(nodeBin: string, cwd: string, args: readonly string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<RunResult> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('OTEL_') && !k.startsWith('LOOPWATCH_') && !k.startsWith('NODE_OPTIONS') && !k.startsWith('VITEST')) base[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(nodeBin, args, {
      cwd,
      env: { ...base, OTEL_METRICS_EXPORTER: 'none', OTEL_LOGS_EXPORTER: 'none', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node ${args.join(' ')} in ${cwd} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr,
        json<T>(): T {
          const line = stdout.trim().split('\n').filter(Boolean).pop();
          if (line === undefined) throw new Error(`no output from node ${args.join(' ')} (exit ${code}); stderr: ${stderr}`);
          return JSON.parse(line) as T;
        },
      });
    });
  });
}

/** A span as received over OTLP/HTTP JSON, flattened. */
export interface ReceivedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly attributes: Record<string, unknown>;
  readonly events: Array<{ name: string; attributes: Record<string, unknown> }>;
  readonly resource: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
type OtlpAttrs = Array<{ key: string; value: OtlpValue }> | undefined;
const value = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values?.map(value);
const attrs = (a: OtlpAttrs): Record<string, unknown> => Object.fromEntries((a ?? []).map((x) => [x.key, value(x.value)]));

/** A local OTLP/HTTP receiver (JSON encoding) on a free loopback port. */
export async function otlpReceiver(): Promise<{ endpoint: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      try {
        const parsed = JSON.parse(body) as {
          resourceSpans?: Array<{ resource?: { attributes?: OtlpAttrs }; scopeSpans?: Array<{ spans?: Array<{ name: string; traceId: string; attributes?: OtlpAttrs; events?: Array<{ name: string; attributes?: OtlpAttrs }> }> }> }>;
        };
        for (const rs of parsed.resourceSpans ?? []) {
          const resource = attrs(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({ name: s.name, traceId: s.traceId, attributes: attrs(s.attributes), events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attrs(e.attributes) })), resource });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}/v1/traces`, spans, close: () => new Promise((r) => server.close(() => r())) };
}
