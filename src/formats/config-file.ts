import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { formatPath, validateConfig, type LoopwatchConfig } from '../detector/config/index.js';
import { describeJsonError, lineAndColumn } from './json-error.js';

/** A configuration file problem: file, line and key in the message. */
export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
}

/**
 * Loads a loopwatch configuration from YAML (or JSON, which YAML parses too) and validates every
 * key, reporting each problem as `file:line: key: message`.
 */
export async function loadConfigFile(path: string): Promise<LoopwatchConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ConfigFileError(`${path}: cannot read the configuration file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseConfigText(text, path);
}

let yamlModule: typeof Yaml | null | undefined;

/**
 * The YAML parser, loaded on first use, or null when it is not installed. It is an optional peer
 * of the library: `loopwatch/register` reads a configuration file only when LOOPWATCH_CONFIG
 * names one, and a JSON file needs no parser of its own. The CLI depends on it.
 */
function yaml(): typeof Yaml | null {
  if (yamlModule === undefined) {
    try {
      yamlModule = createRequire(import.meta.url)('yaml') as typeof Yaml;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
      yamlModule = null;
    }
  }
  return yamlModule;
}

/** JSON text: its first non-blank character opens an object (YAML files start otherwise). */
const looksLikeJson = (text: string): boolean => /^\uFEFF?\s*\{/.test(text);

export function parseConfigText(text: string, source: string): LoopwatchConfig {
  const parser = yaml();
  if (parser === null) {
    if (!looksLikeJson(text)) {
      throw new ConfigFileError(`${source}: a YAML configuration needs the 'yaml' package, which is not installed: add it to the app (npm i yaml), or write the configuration as JSON`);
    }
    return parseJsonConfig(text.replace(/^\uFEFF/, ''), source);
  }
  const { LineCounter, parseDocument, isNode } = parser;
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const messages = doc.errors.map((e) => {
      const pos = lines.linePos(e.pos[0]);
      return `${source}:${pos.line}:${pos.col}: ${e.message.split('\n')[0] ?? 'invalid YAML'}`;
    });
    throw new ConfigFileError(messages.join('\n'));
  }
  let value: unknown;
  try {
    // the yaml parser refuses aliases that expand too far (a "billion laughs" file): say which file
    value = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    throw new ConfigFileError(`${source}: not a usable configuration: ${e instanceof Error ? e.message : 'YAML error'}`);
  }
  const issues = validateConfig(value);
  if (issues.length > 0) {
    const messages = issues.map((issue) => {
      // the deepest existing node on the path gives the line (an unknown key points at itself)
      let line: number | undefined;
      for (let depth = issue.path.length; depth >= 0 && line === undefined; depth--) {
        const node = depth === 0 ? doc.contents : doc.getIn(issue.path.slice(0, depth), true);
        const keyNode = depth > 0 ? findKeyNode(doc, issue.path.slice(0, depth)) : undefined;
        const range = (keyNode ?? (isNode(node) ? node : undefined))?.range;
        if (range) line = lines.linePos(range[0]).line;
      }
      return `${source}${line !== undefined ? `:${line}` : ''}: ${formatPath(issue.path)}: ${issue.message}`;
    });
    throw new ConfigFileError(messages.join('\n'));
  }
  return value as LoopwatchConfig;
}

/** The key node of the last path element (points at `foo:` rather than its value). */
function findKeyNode(doc: Yaml.Document.Parsed, path: ReadonlyArray<string | number>): { range?: [number, number, number] | null } | undefined {
  const { isNode } = yaml() as typeof Yaml;
  const parent = path.length === 1 ? doc.contents : doc.getIn(path.slice(0, -1), true);
  const last = path[path.length - 1];
  if (!parent || typeof parent !== 'object' || !('items' in parent) || !Array.isArray(parent.items)) return undefined;
  for (const item of parent.items as unknown[]) {
    if (item && typeof item === 'object' && 'key' in item) {
      const key = (item as { key: unknown }).key;
      if (isNode(key) && 'value' in key && (key as { value: unknown }).value === last) return key as { range?: [number, number, number] | null };
    }
  }
  return undefined;
}

/** A JSON configuration without the YAML parser: syntax errors by line and column, problems by key. */
function parseJsonConfig(text: string, source: string): LoopwatchConfig {
  const syntax = describeJsonError(text);
  if (syntax !== undefined) {
    const { line, column } = lineAndColumn(text, syntax.offset);
    throw new ConfigFileError(`${source}:${line}:${column}: invalid JSON: ${syntax.problem}`);
  }
  const value = (JSON.parse(text) as unknown) ?? {};
  const issues = validateConfig(value);
  if (issues.length > 0) throw new ConfigFileError(issues.map((issue) => `${source}: ${formatPath(issue.path)}: ${issue.message}`).join('\n'));
  return value as LoopwatchConfig;
}
