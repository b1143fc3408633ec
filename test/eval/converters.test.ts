import { describe, expect, it } from 'vitest';
import { sweAgentRun } from '../../scripts/corpus/formats/swe-agent.js';
import { tau2Runs, type Tau2File } from '../../scripts/corpus/formats/tau2.js';
import { runToOtlp } from '../../scripts/corpus/otlp.js';
import { callsOf } from '../../scripts/corpus/run.js';
import { loopwatchDetections } from '../../scripts/eval/loopwatch.js';
import { runsOf, type Corpus } from '../../scripts/eval/runs.js';
import { decodeTracesData } from '../../src/formats/otlp-json.js';

/** Source runs written here in each format's shape (no fetched text), converted and read back. */

const tau2: Tau2File = {
  info: { agent_info: { llm: 'test-model', implementation: 'llm_agent' } },
  simulations: [
    {
      id: 'sim-1',
      task_id: 7,
      trial: 0,
      start_time: '2026-01-01T10:00:00',
      termination_reason: 'max_steps',
      messages: [
        { role: 'assistant', content: 'Hi', timestamp: '2026-01-01T10:00:01' },
        { role: 'user', content: 'check my two flights', timestamp: '2026-01-01T10:00:05' },
        {
          role: 'assistant',
          content: null,
          usage: { prompt_tokens: 900, completion_tokens: 40 },
          tool_calls: [
            { id: 'same', name: 'get_flight_status', arguments: { flight: 'A1' } },
            { id: 'same', name: 'get_flight_status', arguments: { flight: 'B2' } },
          ],
          timestamp: '2026-01-01T10:00:07',
        },
        { role: 'tool', id: 'same', content: 'available', timestamp: '2026-01-01T10:00:07' },
        { role: 'tool', id: 'same', content: 'landed', timestamp: '2026-01-01T10:00:08' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c3', name: 'book', arguments: { flight: 'A1' } }], timestamp: '2026-01-01T10:00:10' },
        { role: 'tool', id: 'c3', content: 'Error: payment declined', error: true, timestamp: '2026-01-01T10:00:11' },
      ],
    },
  ],
};

describe('the τ² converter', () => {
  const [run] = tau2Runs(tau2, { source: 'test', prefix: 'airline/' });

  it('keeps turns, batches, results in order when ids repeat, errors, usage and recorded times', () => {
    expect(run).toMatchObject({ id: 'airline/7/0', model: 'test-model', outcome: 'max_steps', recordedTimes: true });
    expect(run?.turns.map((t) => [t.kind, t.calls.length])).toEqual([['model', 0], ['user', 0], ['model', 2], ['model', 1]]);
    const calls = callsOf(run as never);
    expect(calls.map((c) => c.result ?? `ERR ${c.error}`)).toEqual(['available', 'landed', 'ERR Error: payment declined']);
    expect(run?.turns[2]?.usage).toEqual({ input: 900, output: 40 });
    expect(calls[0]?.start).toBe(Date.parse('2026-01-01T10:00:07Z') + 1);
  });

  it('writes OTLP whose parallel calls form one batch and whose failure is a span error', () => {
    const spans = decodeTracesData(runToOtlp(run as never));
    const [evalRun] = runsOf('test', spans);
    expect(evalRun?.calls.map((c) => c.batch)).toEqual([evalRun?.calls[0]?.batch, evalRun?.calls[0]?.batch, expect.not.stringMatching(new RegExp(`^${evalRun?.calls[0]?.batch}$`))]);
    expect(evalRun?.calls[2]).toMatchObject({ failed: true, errorText: 'Error: payment declined' });
    expect(spans.filter((s) => s.name.startsWith('chat'))[1]?.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 900, 'gen_ai.usage.output_tokens': 40 });
    expect(spans.find((s) => s.parentSpanId === undefined)?.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'corpus.run.id': 'airline/7/0' });
  });

  it('writes the user message as the gen_ai conventions do: its time on the root, its text on the next chat span', () => {
    const doc = runToOtlp(run as never) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ parentSpanId?: string; events?: unknown }> }> }> };
    const root = doc.resourceSpans[0]?.scopeSpans[0]?.spans.find((s) => s.parentSpanId === undefined);
    expect(root?.events).toEqual([{ timeUnixNano: `${Date.parse('2026-01-01T10:00:05Z')}000000`, name: 'gen_ai.user.message', attributes: [] }]);
    const chats = decodeTracesData(doc).filter((s) => s.name.startsWith('chat'));
    expect(chats.map((s) => s.attributes['gen_ai.input.messages'])).toEqual([
      undefined,
      JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'check my two flights' }] }]),
      undefined,
    ]);
  });
});

describe('the SWE-agent converter', () => {
  const step = (action: string, observation: string): object => ({ action, observation, execution_time: 0.25, thought: 'thinking' });
  const traj = {
    info: { exit_status: 'exit_cost' },
    trajectory: [step('grep -n foo x.py', ''), step('grep -n foo x.py', ''), step('grep -n foo x.py', ''), step('str_replace_editor view /x.py', 'body'), step('', '')],
    history: [
      { role: 'system', content: 'sys' },
      { role: 'assistant', message_type: 'action', tool_calls: [{ id: 't1', function: { name: 'bash', arguments: '{"command": "grep -n foo x.py"}' } }] },
      { role: 'assistant', message_type: 'action', content: 'again\n<function=bash>\n<parameter=command>grep -n foo x.py</parameter>\n</function>' },
      { role: 'assistant', message_type: 'action', tool_calls: [{ id: 't3', function: { name: 'bash', arguments: '{"command": "grep -n foo x.py"}' } }] },
      { role: 'assistant', message_type: 'action', content: '<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/x.py</parameter>\n</function>' },
      { role: 'assistant', message_type: 'action', content: 'out of budget' },
    ],
  };
  const run = sweAgentRun(JSON.stringify(traj), { id: 'repo__repo-1', source: 'test', agent: 'swe-agent', model: 'm', base: Date.parse('2025-01-01T00:00:00Z') });

  it('reads tool calls from native and XML function calls, skips empty actions, synthesizes monotone times', () => {
    const calls = callsOf(run);
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([
      ['bash', { command: 'grep -n foo x.py' }],
      ['bash', { command: 'grep -n foo x.py' }],
      ['bash', { command: 'grep -n foo x.py' }],
      ['str_replace_editor', { command: 'view', path: '/x.py' }],
    ]);
    expect(calls.every((c, i) => i === 0 || c.start > (calls[i - 1]?.end ?? 0))).toBe(true);
    expect((calls[0]?.end ?? 0) - (calls[0]?.start ?? 0)).toBe(250);
    expect(run).toMatchObject({ outcome: 'exit_cost', recordedTimes: false });
  });

  it('reaches loopwatch through the scan path: three identical empty greps are a repeat', () => {
    const spans = decodeTracesData(runToOtlp(run));
    const corpus: Corpus = { id: 'test', kind: 'real', spans, runs: runsOf('test', spans) };
    const found = [...loopwatchDetections(corpus).values()].flat();
    expect(found.map((d) => [d.callIndex, d.kind, d.level])).toEqual([[3, 'repeat', 'warning']]);
  });
});
