import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { COLLECTOR_CONFIG_DIR, GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY, LOAD_BALANCER_CONFIG, SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY } from '../../e2e/support/paths.js';

export const CONFIG_FILES = [GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY, LOAD_BALANCER_CONFIG, SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY] as const;
/** The overlay in collector-config/README.md that sends the sampled traces to an OTLP/HTTP backend. */
export function README_OTLP_HTTP_OVERLAY(): string {
  const readme = readFileSync(join(COLLECTOR_CONFIG_DIR, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Sending the sampled traces to an OTLP/HTTP backend'));
  const snippet = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  if (snippet === undefined) throw new Error('collector-config/README.md: no OTLP/HTTP backend example');
  return snippet;
}

export type ComponentKind = 'receivers' | 'processors' | 'exporters' | 'connectors' | 'extensions';

export type CollectorConfig = Partial<Record<ComponentKind, Record<string, unknown>>> & {
  service?: {
    extensions?: string[];
    pipelines?: Record<string, { receivers?: string[]; processors?: string[]; exporters?: string[] }>;
    telemetry?: unknown;
  };
};

export function readConfig(file: string): CollectorConfig {
  return parse(readFileSync(file, 'utf8')) as CollectorConfig;
}

/** Component types (the part before "/" of an id) each kind of section defines, over all files (and YAML texts). */
export function componentsUsedBy(files: readonly string[], texts: readonly string[] = []): Record<ComponentKind, Set<string>> {
  const used: Record<ComponentKind, Set<string>> = {
    receivers: new Set(),
    processors: new Set(),
    exporters: new Set(),
    connectors: new Set(),
    extensions: new Set(),
  };
  for (const config of [...files.map(readConfig), ...texts.map((t) => parse(t) as CollectorConfig)]) {
    for (const kind of Object.keys(used) as ComponentKind[]) {
      for (const id of Object.keys(config[kind] ?? {})) used[kind].add(id.split('/')[0] ?? id);
    }
  }
  return used;
}

/** Every `${env:NAME:-default}` in a file, with its default. */
export function envDefaults(file: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of readFileSync(file, 'utf8').matchAll(/\$\{env:([A-Z0-9_]+)(?::-([^}]*))?\}/g)) {
    found.set(m[1] ?? '', m[2] ?? '');
  }
  return found;
}
