/**
 * The "Adding loopwatch to an existing collector" block of collector-config/README.md, merged
 * over a minimal existing collector, must pass `otelcol validate`: the docs cannot rot.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { collectorBinary, COLLECTOR_CONFIG_DIR, GATEWAY_CONFIG } from '../e2e/support/paths.js';
import { readConfig, README_OTLP_HTTP_OVERLAY } from './support/configs.js';

const readme = readFileSync(join(COLLECTOR_CONFIG_DIR, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Adding loopwatch to an existing collector'));
const snippet = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
const dir = mkdtempSync(join(tmpdir(), 'loopwatch-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const existingCollector = `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: 127.0.0.1:4317}
exporters:
  otlp_grpc/your_backend:
    endpoint: 127.0.0.1:14317
    tls: {insecure: true}
service:
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [otlp_grpc/your_backend]
`;

describe('collector-config/README.md wiring snippet', () => {
  it('validates when merged over an existing collector config', () => {
    expect(snippet).toContain('count/loopwatch');
    writeFileSync(join(dir, 'existing.yaml'), existingCollector);
    writeFileSync(join(dir, 'loopwatch.yaml'), snippet);
    const res = spawnSync(collectorBinary(), ['validate', '--config', join(dir, 'existing.yaml'), '--config', join(dir, 'loopwatch.yaml')], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(`${res.stdout}${res.stderr}`).toBe('');
    expect(res.status).toBe(0);
  });

  it('defines the same count connector and re-stamping as gateway.yaml', () => {
    const gateway = readConfig(join(COLLECTOR_CONFIG_DIR, 'gateway.yaml'));
    const docs = parse(snippet) as typeof gateway;
    const strip = (c: unknown) => JSON.parse(JSON.stringify(c, (k: string, v: unknown) => (k === 'description' ? undefined : v))) as unknown;
    expect(strip(docs.connectors?.['count/loopwatch'])).toEqual(strip(gateway.connectors?.['count/loopwatch']));
    expect(docs.processors?.['transform/restamp_deltas']).toEqual(gateway.processors?.['transform/restamp_deltas']);
    // the loop-spend statements too (the gateway's also set descriptions)
    const statements = (c: unknown): string[] =>
      ((c as { metric_statements?: { statements: string[] }[] } | undefined)?.metric_statements ?? []).flatMap((g) => g.statements).filter((st) => !st.startsWith('set(metric.description'));
    expect(statements(docs.processors?.['transform/loop_spend'])).toEqual(statements(gateway.processors?.['transform/loop_spend']));
  });
});

describe('collector-config/README.md OTLP/HTTP backend example (Langfuse)', () => {
  it('validates as an overlay of gateway.yaml, sending the sampled traces with otlp_http only', () => {
    const overlay = README_OTLP_HTTP_OVERLAY();
    expect(overlay).toContain('otlp_http/langfuse');
    writeFileSync(join(dir, 'langfuse.yaml'), overlay);
    const res = spawnSync(collectorBinary(), ['validate', '--config', GATEWAY_CONFIG, '--config', join(dir, 'langfuse.yaml')], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', LANGFUSE_AUTH: 'cGstbGYtMTIzOnNrLWxmLTQ1Ng==' },
    });
    expect(`${res.stdout}${res.stderr}`).toBe('');
    expect(res.status).toBe(0);
    const doc = parse(overlay) as { service: { pipelines: Record<string, { exporters: string[] }> } };
    expect(doc.service.pipelines['traces/sampled']?.exporters).toEqual(['otlp_http/langfuse']);
  });

  it('is rejected by the collector when the endpoint is not a URL (the validation can fail)', () => {
    writeFileSync(join(dir, 'bad.yaml'), README_OTLP_HTTP_OVERLAY().replace(/endpoint: .*/, 'endpoint: "::not a url::"'));
    const res = spawnSync(collectorBinary(), ['validate', '--config', GATEWAY_CONFIG, '--config', join(dir, 'bad.yaml')], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(res.status).not.toBe(0);
  });
});
