import type { CorpusCall, CorpusRun, CorpusTurn } from '../run.js';

/**
 * SWE-agent 1.x trajectories (`*.traj`): one model call per step, one action per step. The tool
 * call comes from the assistant message of the history (native `tool_calls`, or the XML
 * `<function=…><parameter=…>` form of models without function calling); the observation and the
 * execution time from the trajectory step. The files hold no wall-clock times: model calls get a
 * fixed synthetic duration and tool calls their recorded execution time, so times are monotone.
 */

interface Step {
  readonly thought?: unknown;
  readonly action?: unknown;
  readonly observation?: unknown;
  readonly execution_time?: unknown;
}

interface HistoryEntry {
  readonly role?: unknown;
  readonly content?: unknown;
  readonly message_type?: unknown;
  readonly tool_calls?: unknown;
}

const MODEL_CALL_MS = 3_000;
const FUNCTION = /<function=([\w.-]+)>([\s\S]*?)(?:<\/function>|$)/;
const PARAMETER = /<parameter=([\w.-]+)>([\s\S]*?)<\/parameter>/g;

function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map((p) => (typeof p === 'object' && p !== null && 'text' in p ? String((p as { text: unknown }).text) : '')).join('');
  return '';
}

/** The tool call an assistant message asked for: native tool call, else the XML function form. */
function callOf(entry: HistoryEntry | undefined, action: string): { name: string; args: unknown; id?: string } {
  const tc = Array.isArray(entry?.tool_calls) ? (entry?.tool_calls[0] as { id?: unknown; function?: { name?: unknown; arguments?: unknown } } | undefined) : undefined;
  if (tc?.function && typeof tc.function.name === 'string') {
    let args: unknown = tc.function.arguments;
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        // keep the raw text: detection reads it as text
      }
    }
    return { name: tc.function.name, args, ...(typeof tc.id === 'string' ? { id: tc.id } : {}) };
  }
  const m = FUNCTION.exec(text(entry?.content));
  if (m?.[1]) {
    const args: Record<string, string> = {};
    for (const p of (m[2] ?? '').matchAll(PARAMETER)) args[p[1] ?? ''] = (p[2] ?? '').replace(/^\n/, '').replace(/\n$/, '');
    return { name: m[1], args };
  }
  // the executed command alone: its first word names the tool when it is one of SWE-agent's own
  const first = action.trim().split(/\s+/)[0] ?? '';
  const name = first === 'str_replace_editor' || first === 'submit' ? first : 'bash';
  return { name, args: { command: action } };
}

export function sweAgentRun(json: string, meta: { id: string; source: string; agent: string; model: string; base: number }): CorpusRun {
  const doc = JSON.parse(json) as { trajectory?: Step[]; history?: HistoryEntry[]; info?: { exit_status?: unknown } };
  const steps = doc.trajectory ?? [];
  const actions = (doc.history ?? []).filter((h) => h.role === 'assistant' && h.message_type === 'action');
  const aligned = actions.length === steps.length;
  const turns: CorpusTurn[] = [];
  let t = meta.base;
  steps.forEach((step, i) => {
    const action = typeof step.action === 'string' ? step.action : '';
    const start = t;
    t += MODEL_CALL_MS;
    const thought = text(step.thought);
    if (action.trim() === '') {
      turns.push({ kind: 'model', start, end: t, calls: [], text: thought });
      return;
    }
    const { name, args, id } = callOf(aligned ? actions[i] : undefined, action);
    const seconds = typeof step.execution_time === 'number' && Number.isFinite(step.execution_time) ? step.execution_time : 0;
    const callStart = t + 1;
    const callEnd = callStart + Math.max(2, Math.round(seconds * 1000));
    const call: CorpusCall = {
      name,
      arguments: args,
      result: typeof step.observation === 'string' ? step.observation : text(step.observation),
      ...(id !== undefined ? { id } : {}),
      start: callStart,
      end: callEnd,
    };
    turns.push({ kind: 'model', start, end: t, calls: [call], text: thought });
    t = callEnd + 1;
  });
  const exit = doc.info?.exit_status;
  return {
    id: meta.id,
    source: meta.source,
    agent: meta.agent,
    model: meta.model,
    outcome: typeof exit === 'string' ? exit : 'unknown',
    recordedTimes: false,
    turns,
  };
}
