/**
 * Generates schema/loopwatch.schema.json, the JSON Schema of loopwatch's configuration file
 * (`loopwatch scan --config`, LOOPWATCH_CONFIG, and the object the processor takes), from the
 * configuration module's own key lists and number limits (src/detector/config/index.ts), so the schema
 * editors use and the validator loopwatch runs cannot drift apart. `npm run schema` writes it;
 * `npm run schema -- --check` exits 1 when the committed file is stale (the tests do the same).
 *
 * What a JSON Schema cannot say, the validator still checks: a threshold's warning above its
 * critical (test/config/schema.unit.test.ts lists this difference).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CONFIG_KEYS,
  CYCLE_KEYS,
  DEFAULT_THRESHOLDS,
  EVIDENCE_KEYS,
  MODES,
  NUMBER_LIMITS,
  PRICE_KEYS,
  ROLE_KEYS,
  ROLE_NAMES,
  RULE_KEYS,
  SPACING_KEYS,
  THRESHOLD_KEYS,
  TOOL_OVERRIDE_KEYS,
  TOOL_ROLES,
  VOLATILE_KEYS_KEYS,
  type NumberLimits,
} from '../src/detector/config/index.js';

export const SCHEMA_FILE = 'schema/loopwatch.schema.json';
/** Where editors find it once loopwatch is installed, and on the npm CDN. */
export const SCHEMA_ID = 'https://unpkg.com/loopwatch/schema/loopwatch.schema.json';

type Schema = Record<string, unknown>;

/** What each setting means, for editors' hover text. Every key of every key list needs one (checked below). */
const DESCRIPTIONS: Record<string, string> = {
  mode: '"enforce": critical detections abort the trace\'s signal; "observe": report what would fire (events, onLoop, logs) and never abort.',
  thresholds: 'Warning and critical levels per rule. null turns a level off; an omitted level keeps its default.',
  evidence: 'Stricter levels used when tool arguments or results are not captured (the stricter of these and the rule\'s).',
  cycle: 'Cycle detection.',
  spacing: 'Repetitions more than idleMs apart count for weight only, so spaced-out polls stay quiet.',
  gapBudget: 'Unrelated calls a streak of the weaker rules (same result, error class, changing output) survives.',
  historySize: 'Tool calls remembered per trace.',
  roles: 'Tool-name patterns that give tools a role, and the role\'s thresholds. A role\'s match replaces its built-in patterns.',
  tools: 'Per-tool overrides; keys are tool names, * matches any run of characters.',
  volatileKeys: 'Member names ignored everywhere in arguments / results, added to the built-in lists.',
  knownTools: 'When set, a call to any other tool name counts as a call to a tool that does not exist.',
  prices: 'What model calls cost, to report loops in USD: model name or * pattern (the response or request model of the model-call span) -> USD per million tokens. No built-in list; without an entry, loops are reported in tokens only.',
  input: 'USD per million input tokens.',
  output: 'USD per million output tokens.',
  cachedInput: 'USD per million input tokens read from the provider\'s prompt cache (default: input).',
  warning: 'First intervention (a warning detection, a hint from the guard).',
  critical: 'Stop: the trace\'s abort signal fires (in enforce mode).',
  backToBack: 'The identical call with the same result in consecutive steps, nothing else new in them: calls.',
  repeat: 'Identical calls (arguments and result), nothing new between: calls.',
  recheck: 'Identical calls (arguments and result) with other work between: calls.',
  changingOutput: 'Identical arguments while the output changes every time: calls.',
  noProgress: 'The same informative result to different arguments: calls.',
  nothingNew: 'Calls in a row that each repeat an earlier call of the trace (same tool, arguments and outcome): calls.',
  resentBatch: 'A batch of several calls sent again whole, every call failing with the same error as before: laps.',
  repeatedFailure: 'The same call failing with the same error (class, message and output), nothing new between: failures.',
  failingRecheck: 'The same call failing with the same error, with other work between: failures.',
  changingFailure: 'The same call failing in a row while its error changes: failures.',
  errorClass: 'One tool failing with the same error class over changing arguments: failures.',
  unknownTool: 'Calls to a tool that does not exist: calls.',
  argumentsOnly: 'Levels when results are not captured (repeats rest on arguments alone).',
  nameOnly: 'Levels when neither arguments nor results are captured (tool names alone; critical off by default).',
  maxPeriod: 'Longest cycle period looked for, in steps.',
  idleMs: 'Idle time between repetitions after which they weigh less (milliseconds).',
  weight: 'What a spaced-out repetition counts for (0 to 1).',
  poller: 'Tools called again and again by design (status checks, log tails): higher thresholds.',
  wait: 'Sleeps and delays: invisible to the other rules, only a long run of them is flagged.',
  writer: 'Tools named like a write (update_*, transfer_*, *_append): the same write answered the same way 3 times back to back is stopped.',
  exempt: 'Never flagged.',
  match: 'Regular expressions (case-insensitive) on the tool name, in its snake_case form.',
  role: 'normal, poller, wait, writer or exempt.',
  arguments: 'Member names ignored in tool arguments.',
  result: 'Member names ignored in tool results.',
};

function describe(key: string): string {
  const d = DESCRIPTIONS[key];
  if (d === undefined) throw new Error(`scripts/config-schema.ts: no description for the configuration key "${key}"`);
  return d;
}

function numberSchema(limits: NumberLimits, key: string): Schema {
  const n: Schema = { type: limits.integer ? 'integer' : 'number', minimum: limits.min, ...(limits.max !== undefined ? { maximum: limits.max } : {}) };
  return { description: describe(key), ...(limits.nullable ? { anyOf: [n, { type: 'null' }] } : n) };
}

/** An object with exactly these keys (each optional), unknown keys rejected, as the validator does. */
function object<K extends string>(keys: readonly K[], property: (key: K) => Schema, description?: string): Schema {
  return {
    type: 'object',
    ...(description !== undefined ? { description } : {}),
    additionalProperties: false,
    properties: Object.fromEntries(keys.map((k) => [k, property(k)])),
  };
}

const stringList = (key: string, extra: Schema = {}): Schema => ({ description: describe(key), type: 'array', items: { type: 'string', ...extra } });

export function buildConfigSchema(): Schema {
  const threshold: Schema = object(THRESHOLD_KEYS, (k) => ({ $ref: '#/definitions/level', description: describe(k) }), 'A { warning, critical } pair.');
  const ruleThresholds: Schema = object(RULE_KEYS, (k) => ({ $ref: '#/definitions/threshold', description: `${describe(k)} Default ${DEFAULT_THRESHOLDS[k].warning} / ${DEFAULT_THRESHOLDS[k].critical}.` }));
  const volatileKeys = (key: string): Schema => ({ ...object(VOLATILE_KEYS_KEYS, (k) => stringList(k)), description: describe(key) });
  const top: Record<string, Schema> = {
    mode: { description: describe('mode'), enum: [...MODES] },
    thresholds: { description: describe('thresholds'), $ref: '#/definitions/ruleThresholds' },
    evidence: object(EVIDENCE_KEYS, (k) => ({ $ref: '#/definitions/threshold', description: describe(k) }), describe('evidence')),
    cycle: object(CYCLE_KEYS, (k) => numberSchema(NUMBER_LIMITS.maxPeriod, k), describe('cycle')),
    spacing: object(SPACING_KEYS, (k) => numberSchema(k === 'idleMs' ? NUMBER_LIMITS.idleMs : NUMBER_LIMITS.weight, k), describe('spacing')),
    gapBudget: numberSchema(NUMBER_LIMITS.gapBudget, 'gapBudget'),
    historySize: numberSchema(NUMBER_LIMITS.historySize, 'historySize'),
    roles: object(
      ROLE_NAMES,
      (name) => object(ROLE_KEYS, (k) => (k === 'match' ? stringList('match', { format: 'regex' }) : { $ref: '#/definitions/ruleThresholds', description: `Thresholds of tools with this role (over the defaults).` }), describe(name)),
      describe('roles'),
    ),
    tools: {
      description: describe('tools'),
      type: 'object',
      additionalProperties: object(
        TOOL_OVERRIDE_KEYS,
        (k) => (k === 'role' ? { description: describe('role'), enum: [...TOOL_ROLES] } : k === 'thresholds' ? { $ref: '#/definitions/ruleThresholds', description: 'Thresholds of this tool (over its role\'s).' } : volatileKeys('volatileKeys')),
      ),
    },
    volatileKeys: volatileKeys('volatileKeys'),
    knownTools: stringList('knownTools'),
    prices: {
      description: describe('prices'),
      type: 'object',
      additionalProperties: {
        ...object(PRICE_KEYS, (k) => numberSchema(NUMBER_LIMITS.price, k)),
        required: ['input', 'output'],
      },
    },
  };
  const missing = CONFIG_KEYS.filter((k) => top[k] === undefined);
  if (missing.length > 0) throw new Error(`scripts/config-schema.ts: no schema for ${missing.join(', ')}`);
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: SCHEMA_ID,
    title: 'loopwatch configuration',
    description:
      'loopwatch.yaml: thresholds, tool roles and volatile keys for loop detection (loopwatch scan --config, LOOPWATCH_CONFIG, new LoopDetectionSpanProcessor(config)). Generated from src/detector/config/index.ts by scripts/config-schema.ts.',
    type: ['object', 'null'],
    additionalProperties: false,
    properties: Object.fromEntries(CONFIG_KEYS.map((k) => [k, top[k]])),
    definitions: {
      level: { anyOf: [{ type: 'number', minimum: NUMBER_LIMITS.threshold.min }, { type: 'null' }] },
      threshold,
      ruleThresholds,
    },
  };
}

export const schemaText = (): string => `${JSON.stringify(buildConfigSchema(), null, 2)}\n`;

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const repo = join(import.meta.dirname, '..');
  const file = join(repo, SCHEMA_FILE);
  const fresh = schemaText();
  if (process.argv.includes('--check')) {
    const stale = readFileSync(file, 'utf8') !== fresh;
    if (stale) console.error(`${SCHEMA_FILE} is out of date: run npm run schema`);
    process.exit(stale ? 1 : 0);
  }
  writeFileSync(file, fresh);
  console.log(`wrote ${SCHEMA_FILE}`);
}
