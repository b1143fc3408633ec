import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY, LOAD_BALANCER_CONFIG, SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY } from '../../e2e/support/paths.js';

export const CONFIG_FILES = [GATEWAY_CONFIG, GATEWAY_FILE_EXPORT_OVERLAY, LOAD_BALANCER_CONFIG, SERVE_GATEWAY_CONFIG, SERVE_GATEWAY_FILE_EXPORT_OVERLAY] as const;
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

/** Component types (the part before "/" of an id) each kind of section defines, over all files. */
export function componentsUsedBy(files: readonly string[]): Record<ComponentKind, Set<string>> {
  const used: Record<ComponentKind, Set<string>> = {
    receivers: new Set(),
    processors: new Set(),
    exporters: new Set(),
    connectors: new Set(),
    extensions: new Set(),
  };
  for (const file of files) {
    const config = readConfig(file);
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
