/**
 * `npm ci` on the Node line the project supports prints no EBADENGINE warning (issue 18): every
 * package the root lockfile installs accepts Node 20. npm checks each installed package's
 * `engines.node` against the running Node and skips the check for optional packages it does not
 * install on this platform (native bindings); the lockfile records both. Packages that need
 * Node >= 22 (the AI SDK v7) live in their own Node 22 matrix cell (test/matrix/ai-sdk-v7).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '..', '..');

interface LockEntry {
  engines?: { node?: string } | string[];
  optional?: boolean;
}
interface Lockfile {
  packages: Record<string, LockEntry>;
}

/** Lockfile packages whose `engines.node` rejects `node` (a version or a range such as `20`). */
function nodeRejectedBy(lock: Lockfile, node: string): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && entry.optional !== true)
    .flatMap(([path, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (range === undefined) return [];
      const ok = semver.valid(node) ? semver.satisfies(node, range) : semver.intersects(node, range);
      return ok ? [] : [`${path.replace(/^.*node_modules\//, '')} (node ${range})`];
    });
}

const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as Lockfile;
const rootEngines = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;

describe('engines', () => {
  it('the root supports Node 20', () => {
    expect(semver.intersects(rootEngines, '20')).toBe(true);
  });

  it('every package the root lockfile installs accepts Node 20 (no EBADENGINE on `npm ci`)', () => {
    expect(nodeRejectedBy(lock, '20')).toEqual([]);
  });

  it.runIf(process.versions.node.startsWith('20.'))('every package accepts the Node 20 this runs on, exactly as npm checks it', () => {
    expect(nodeRejectedBy(lock, process.versions.node)).toEqual([]);
  });

  it('the check reports a Node 22 only package and ignores optional and unconstrained ones', () => {
    const sample: Lockfile = {
      packages: {
        '': { engines: { node: '>=20.6.0' } },
        'node_modules/ai-v7': { engines: { node: '>=22' } },
        'node_modules/ai-v7/node_modules/@ai-sdk/gateway': { engines: { node: '>=22' } },
        'node_modules/@napi-rs/lzma-linux-x64-gnu': { engines: { node: '^22.20 || ^24.12 || >=25' }, optional: true },
        'node_modules/vite': { engines: { node: '^20.19.0 || >=22.12.0' } },
        'node_modules/old': { engines: ['node >= 0.4'] },
        'node_modules/plain': {},
      },
    };
    expect(nodeRejectedBy(sample, '20')).toEqual(['ai-v7 (node >=22)', '@ai-sdk/gateway (node >=22)']);
    expect(nodeRejectedBy(sample, '20.6.0')).toEqual(['ai-v7 (node >=22)', '@ai-sdk/gateway (node >=22)', 'vite (node ^20.19.0 || >=22.12.0)']);
  });
});
