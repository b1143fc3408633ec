/** `otelcol validate` (config decoding, OTTL parsing, pipeline graph) on every shipped config. */
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  collectorBinary,
  GATEWAY_CONFIG,
  GATEWAY_FILE_EXPORT_OVERLAY,
  LOAD_BALANCER_CONFIG,
  SERVE_GATEWAY_CONFIG,
  SERVE_GATEWAY_FILE_EXPORT_OVERLAY,
} from '../e2e/support/paths.js';
import { envDefaults, readConfig } from './support/configs.js';

/** Runs `validate` with only PATH/HOME from this environment, so stray LOOPWATCH_* cannot mask a default. */
function validate(configs: readonly string[], env: Record<string, string> = {}): { status: number | null; output: string } {
  const res = spawnSync(collectorBinary(), ['validate', ...configs.flatMap((c) => ['--config', c])], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  return { status: res.status, output: `${res.stdout}${res.stderr}` };
}

describe('otelcol validate', () => {
  it.each([
    ['gateway.yaml', [GATEWAY_CONFIG]],
    ['gateway.yaml + gateway.file-export.yaml', [GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY]],
    ['load-balancer.yaml', [LOAD_BALANCER_CONFIG]],
    ['serve-gateway.yaml', [SERVE_GATEWAY_CONFIG]],
    ['serve-gateway.yaml + serve-gateway.file-export.yaml', [SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY]],
  ])('accepts %s with its defaults', (_name, configs) => {
    const res = validate(configs);
    expect(res.output).toBe('');
    expect(res.status).toBe(0);
  });

  it('accepts every setting overridden from the environment', () => {
    const env = {
      LOOPWATCH_OTLP_GRPC_ENDPOINT: '0.0.0.0:4317',
      LOOPWATCH_OTLP_HTTP_ENDPOINT: '0.0.0.0:4318',
      LOOPWATCH_PROMETHEUS_ENDPOINT: '0.0.0.0:8889',
      LOOPWATCH_HEALTH_ENDPOINT: '0.0.0.0:13133',
      LOOPWATCH_TELEMETRY_HOST: '0.0.0.0',
      LOOPWATCH_TELEMETRY_PORT: '9888',
      LOOPWATCH_TRACES_BACKEND_ENDPOINT: 'tempo.observability:4317',
      LOOPWATCH_TRACES_BACKEND_INSECURE: 'false',
      LOOPWATCH_SAMPLE_PERCENT: '2.5',
      LOOPWATCH_DECISION_WAIT: '300s',
      LOOPWATCH_DECISION_WAIT_AFTER_ROOT: '10s',
      LOOPWATCH_SAMPLED_TRACES_FILE: '/var/lib/loopwatch/sampled.jsonl',
      LOOPWATCH_LOG_RECORDS_FILE: '/var/lib/loopwatch/log-records.jsonl',
      LOOPWATCH_GATEWAYS: '[gw-0.gw:4317, gw-1.gw:4317, gw-2.gw:4317]',
      LOOPWATCH_GATEWAYS_INSECURE: 'false',
    };
    for (const configs of [[GATEWAY_CONFIG], [GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY], [LOAD_BALANCER_CONFIG], [SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY]]) {
      expect(validate(configs, env)).toEqual({ status: 0, output: '' });
    }
  });

  it('rejects what it should (so the passes above mean something)', () => {
    // A typo inside the count connector's OTTL condition.
    const dir = mkdtempSync(join(tmpdir(), 'loopwatch-validate-'));
    const broken = join(dir, 'gateway.yaml');
    writeFileSync(broken, readFileSync(GATEWAY_CONFIG, 'utf8').replace('spanevent.name == "loop.detected"', 'spanevent.nam == "loop.detected"'));
    const ottl = validate([broken]);
    expect(ottl.status).not.toBe(0);
    expect(ottl.output).toContain('gen_ai.tool.loop.detections');
    // A sampling share that is not a number.
    expect(validate([GATEWAY_CONFIG], { LOOPWATCH_SAMPLE_PERCENT: 'ten' }).output).toContain('sampling_percentage');
    // An empty gateway list.
    expect(validate([LOAD_BALANCER_CONFIG], { LOOPWATCH_GATEWAYS: '[]' }).status).not.toBe(0);
  });
});

describe('shipped defaults', () => {
  it.each([GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY, LOAD_BALANCER_CONFIG, SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY])('%s listens on loopback only unless told otherwise', (file) => {
    const defaults = envDefaults(file);
    for (const [name, value] of defaults) {
      if (/_(ENDPOINT|HOST)$/.test(name)) expect(value, name).toMatch(/^127\.0\.0\.1(:\d+)?$/);
    }
    expect(readFileSync(file, 'utf8')).not.toMatch(/0\.0\.0\.0|localhost/);
  });

  it.each([GATEWAY_CONFIG, LOAD_BALANCER_CONFIG, SERVE_GATEWAY_CONFIG])('%s uses every component it defines', (file) => {
    const config = readConfig(file);
    const referenced = new Set([
      ...(config.service?.extensions ?? []),
      ...Object.values(config.service?.pipelines ?? {}).flatMap((p) => [...(p.receivers ?? []), ...(p.processors ?? []), ...(p.exporters ?? [])]),
    ]);
    for (const kind of ['receivers', 'processors', 'exporters', 'connectors', 'extensions'] as const) {
      for (const id of Object.keys(config[kind] ?? {})) expect(referenced.has(id), `${kind}.${id}`).toBe(true);
    }
  });
});
