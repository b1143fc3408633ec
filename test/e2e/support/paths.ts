import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const COLLECTOR_CONFIG_DIR = join(REPO_ROOT, 'collector-config');
export const GATEWAY_CONFIG = join(COLLECTOR_CONFIG_DIR, 'gateway.yaml');
export const GATEWAY_FILE_EXPORT_OVERLAY = join(COLLECTOR_CONFIG_DIR, 'gateway.file-export.yaml');
export const LOAD_BALANCER_CONFIG = join(COLLECTOR_CONFIG_DIR, 'load-balancer.yaml');
export const SERVE_GATEWAY_CONFIG = join(COLLECTOR_CONFIG_DIR, 'serve-gateway.yaml');
export const SERVE_GATEWAY_FILE_EXPORT_OVERLAY = join(COLLECTOR_CONFIG_DIR, 'serve-gateway.file-export.yaml');
export const BUILDER_MANIFEST = join(COLLECTOR_CONFIG_DIR, 'builder-config.yaml');
export const RULES_FILE = join(COLLECTOR_CONFIG_DIR, 'prometheus', 'loopwatch.rules.yml');
export const RULES_TEST_FILE = join(COLLECTOR_CONFIG_DIR, 'prometheus', 'loopwatch.rules_test.yml');
/** Scratch space for test and stack runs (gitignored). */
export const RUN_ROOT = join(REPO_ROOT, 'test', 'e2e', '.run');

/**
 * The collector binary built by scripts/setup/20-collector.sh (cached outside the repo, keyed by
 * the manifest's hash). scripts/collector-path.sh is the one place that knows the layout.
 */
export function collectorBinary(): string {
  try {
    return execFileSync('bash', [join(REPO_ROOT, 'scripts', 'collector-path.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    throw new Error(`the loopwatch collector is not built: run \`bash scripts/setup/20-collector.sh\` (npm test does). ${detail}`);
  }
}

/** `prometheus` / `promtool` from PATH (Debian's package, installed by scripts/setup/10-prometheus.sh). */
export function requireTool(name: 'prometheus' | 'promtool'): string {
  try {
    return execFileSync('bash', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`${name} is not on PATH: run \`bash scripts/setup/10-prometheus.sh\` (npm test does)`);
  }
}
