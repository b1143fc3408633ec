/**
 * The builder manifest: one pinned release, exactly the components the configs use, and a build
 * cached outside the repo under the manifest's hash.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BUILDER_MANIFEST, collectorBinary, REPO_ROOT } from '../e2e/support/paths.js';
import { join } from 'node:path';
import { componentsUsedBy, CONFIG_FILES, README_OTLP_HTTP_OVERLAY, type ComponentKind } from './support/configs.js';
import { COLLECTOR_CONFIG_DIR } from '../e2e/support/paths.js';

interface Manifest {
  dist: { name: string; output_path: string };
  receivers?: { gomod: string }[];
  processors?: { gomod: string }[];
  exporters?: { gomod: string }[];
  connectors?: { gomod: string }[];
  extensions?: { gomod: string }[];
  providers?: { gomod: string }[];
}

const manifestText = readFileSync(BUILDER_MANIFEST, 'utf8');
const manifest = parse(manifestText) as Manifest;
const KINDS: readonly ComponentKind[] = ['receivers', 'processors', 'exporters', 'connectors', 'extensions'];

/** `otelcol components` of the built binary: component type names and modules per kind. */
function builtComponents(): Record<ComponentKind, { name: string; module: string; stability: Record<string, string> }[]> {
  const out = execFileSync(collectorBinary(), ['components'], { encoding: 'utf8' });
  return parse(out) as Record<ComponentKind, { name: string; module: string; stability: Record<string, string> }[]>;
}

describe('collector-config/builder-config.yaml', () => {
  it('pins every module to the release named on its ocb-version line', () => {
    const pinned = /^# ocb-version: (v\d+\.\d+\.\d+)$/m.exec(manifestText)?.[1];
    expect(pinned).toBeDefined();
    const components = KINDS.flatMap((k) => manifest[k] ?? []).map((c) => c.gomod);
    expect(components.length).toBeGreaterThan(0);
    for (const gomod of components) expect(gomod.split(' ')[1], gomod).toBe(pinned);
    // Stable core modules (confmap providers) follow the v1.x line that pairs with the release.
    const providerVersions = new Set((manifest.providers ?? []).map((p) => p.gomod.split(' ')[1]));
    expect(providerVersions.size).toBe(1);
  });

  it('builds a collector with exactly the components the configs and the README examples use, from the pinned modules', () => {
    const built = builtComponents();
    const used = componentsUsedBy(CONFIG_FILES, [README_OTLP_HTTP_OVERLAY()]);
    for (const kind of KINDS) {
      const names = (built[kind] ?? []).map((c) => c.name).sort();
      expect(names, `${kind} in the binary vs. in the configs`).toEqual([...used[kind]].sort());
    }
    const builtModules = KINDS.flatMap((k) => (built[k] ?? []).map((c) => c.module)).sort();
    const manifestModules = KINDS.flatMap((k) => (manifest[k] ?? []).map((c) => c.gomod)).sort();
    expect(builtModules).toEqual(manifestModules);
  });

  it("README's stability table says what the built binary says, for the signals used (Alpha named as such)", () => {
    const readme = readFileSync(join(COLLECTOR_CONFIG_DIR, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('### Component stability'), readme.indexOf('## ', readme.indexOf('### Component stability') + 4));
    const rows = [...table.matchAll(/^\| `(\w+)` \| (\w+) \| ([^|]+) \| \**(\w+)\** \|$/gm)].map((m) => ({ name: m[1] ?? '', kind: `${m[2] ?? ''}s` as ComponentKind, stability: m[4] ?? '' }));
    const built = builtComponents();
    const all = KINDS.flatMap((k) => (built[k] ?? []).map((c) => ({ kind: k, name: c.name })));
    expect(rows.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(all.map((c) => `${c.kind}/${c.name}`).sort());
    // The signals each component is used for here: traces, or metrics for the counters' pipeline.
    const signal: Record<string, string> = { count: 'traces-to-metrics', delta_to_cumulative: 'metrics', transform: 'metrics', file: 'traces', tail_sampling: 'traces', load_balancing: 'traces', prometheus: 'metrics', health_check: 'extension' };
    for (const r of rows) {
      const c = built[r.kind]?.find((x) => x.name === r.name);
      const levels = Object.entries(c?.stability ?? {}).filter(([s]) => (signal[r.name] ?? 'traces') === s).map(([, v]) => v);
      expect(levels, `${r.name}: stability for ${signal[r.name] ?? 'traces'}`).toEqual([r.stability]);
    }
  });

  it('caches the binary outside the repo, keyed by the hash of the manifest', () => {
    const binary = collectorBinary();
    const sha = createHash('sha256').update(readFileSync(BUILDER_MANIFEST)).digest('hex').slice(0, 16);
    expect(binary.startsWith(REPO_ROOT)).toBe(false);
    expect(binary.endsWith(`/otelcol/${sha}/_build/${manifest.dist.name}`)).toBe(true);
  });

  it('setup script is warm once built: prints the same path without building', () => {
    const started = Date.now();
    const out = execFileSync('bash', [`${REPO_ROOT}scripts/setup/20-collector.sh`], { encoding: 'utf8' }).trim();
    expect(out).toBe(collectorBinary());
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
