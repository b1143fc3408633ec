import { describe, expect, it } from 'vitest';
import { liveMcpRuns, pythonTextContent, type LiveMcpTask } from '../../scripts/corpus/formats/livemcp.js';
import { sweAgentRun } from '../../scripts/corpus/formats/swe-agent.js';
import { tau2Runs, type Tau2File } from '../../scripts/corpus/formats/tau2.js';
import { toolathlonRun, type ToolathlonFile } from '../../scripts/corpus/formats/toolathlon.js';
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

/** A tool message of Toolathlon: MCP content items as JSON text. */
const items = (...texts: string[]): string => JSON.stringify(texts.map((text) => ({ type: 'text', text, annotations: null })));

describe('the Toolathlon converter', () => {
  const call = (id: string, name: string, args: object): object => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
  const file: ToolathlonFile = {
    pass: null,
    failure: 'Task status: max_turns_reached, only SUCCESS counts as pass',
    messages: [
      { role: 'user', content: 'fill the sheet' },
      { role: 'assistant', content: 'reading', tool_calls: [call('a', 'filesystem-read_file', { path: 'x.csv' }), call('b', 'local-python-execute', { code: 'boom()' })] },
      { role: 'tool', tool_call_id: 'b', content: '=== STDERR ===\nNameError\n=== EXECUTION INFO ===\nReturn code: 1\nExecution time: 0.1 seconds' },
      { role: 'tool', tool_call_id: 'a', content: JSON.stringify({ type: 'text', text: 'a,b\n1,2', annotations: null }) },
      { role: 'assistant', content: null, tool_calls: [call('c', 'terminal-run_command', { command: 'ls' })] },
      { role: 'tool', tool_call_id: 'c', content: items('x.csv\n', '\nCommand completed with return code: 0') },
      { role: 'assistant', content: null, tool_calls: [call('d', 'google_sheet-get_sheet_data', { sheet: 'S' }), call('e', 'excel-edit_file', {})] },
      { role: 'tool', tool_call_id: 'd', content: JSON.stringify({ type: 'text', text: 'Error executing tool get_sheet_data: 404', annotations: null }) },
      { role: 'tool', tool_call_id: 'e', content: 'Tool excel-edit_file not found in agent Assistant' },
      { role: 'user', content: '[Context reset] go on' },
      { role: 'assistant', content: null, tool_calls: [call('f', 'terminal-run_command', { command: 'zip' })] },
      { role: 'tool', tool_call_id: 'f', content: items('/bin/sh: 1: zip: not found\n', '\nCommand completed with return code: 127') },
    ],
  };
  const run = toolathlonRun(file, { name: 'model-x_fill-sheet.json', source: 'test', agent: 'toolathlon', base: Date.parse('2025-10-21T00:00:00Z') });

  it('names the run by model and task, keeps the turn limit as the outcome, batches and user turns', () => {
    expect(run).toMatchObject({ id: 'model-x/fill-sheet', model: 'model-x', outcome: 'max_turns_reached', recordedTimes: false });
    expect(run.turns.map((t) => [t.kind, t.calls.length])).toEqual([['user', 0], ['model', 2], ['model', 1], ['model', 2], ['user', 0], ['model', 1]]);
    expect(run.turns[4]?.text).toBe('[Context reset] go on');
    expect(toolathlonRun({ pass: true, messages: [] }, { name: 'm_t.json', source: 's', agent: 'a', base: 0 }).outcome).toBe('pass');
  });

  it('reads failures as the servers write them: exit codes without a class, MCP errors as tool_error', () => {
    const calls = callsOf(run);
    expect(calls.map((c) => [c.id, c.error === undefined ? 'ok' : c.errorType === undefined ? '_OTHER' : c.errorType])).toEqual([
      ['a', 'ok'],
      ['b', null],
      ['c', 'ok'],
      ['d', 'tool_error'],
      ['e', '_OTHER'],
      ['f', null],
    ]);
    expect(calls[1]?.error).toContain('NameError');
    expect(calls[3]?.error).toBe('Error executing tool get_sheet_data: 404');
  });

  it('writes a command that exited non-zero as status ERROR without error.type', () => {
    const spans = decodeTracesData(runToOtlp(run)).filter((s) => s.name.startsWith('execute_tool'));
    expect(spans.map((s) => [s.status?.code ?? 0, s.attributes['error.type']])).toEqual([
      [0, undefined],
      [2, undefined],
      [0, undefined],
      [2, 'tool_error'],
      [2, '_OTHER'],
      [2, undefined],
    ]);
  });
});

describe('the LiveMCPBench converter', () => {
  // Python's repr of a string: single quotes (escaped inside) unless the text has only single quotes
  const literal = (text: string): string => (text.includes("'") && !text.includes('"') ? `"${text}"` : `'${text.replace(/'/g, "\\'")}'`);
  const repr = (text: string, isError: boolean): string => `meta=None content=[TextContent(type='text', text=${literal(text)}, annotations=None)] isError=${isError ? 'True' : 'False'}`;
  const wrapped = (text: string, isError: boolean): string => repr(`{\\n  "_meta": null,\\n  "content": [{"type": "text", "text": "${text}"}],\\n  "isError": ${String(isError)}\\n}`, false);
  const exec = (id: string, tool: string): object => ({ id, type: 'function', function: { name: 'execute-tool', arguments: JSON.stringify({ server_name: 'fs', tool_name: tool, params: { path: '/x' } }) } });
  const tasks: LiveMcpTask[] = [
    {
      task_id: 'uuid-1',
      category: 'work',
      response: 'done',
      messages: [
        { role: 'system', content: 'two tools' },
        { role: 'user', content: 'write /x' },
        { role: 'assistant', content: 'finding', tool_calls: [{ id: 'r', type: 'function', function: { name: 'route', arguments: '{"query": "write a file"}' } }] },
        { role: 'tool', tool_call_id: 'r', content: repr('success: true\\nmatched_tools: []', false) },
        { role: 'assistant', content: null, tool_calls: [exec('w1', 'write_file'), exec('w2', 'edit_file')] },
        { role: 'tool', tool_call_id: 'w1', content: wrapped("Input validation error: 'file_hash' is a required property", true) },
        { role: 'tool', tool_call_id: 'w2', content: repr('Error executing tool execute-tool: INTERNAL_ERROR', true) },
        { role: 'assistant', content: null, tool_calls: [exec('w3', 'write_file')] },
        { role: 'tool', tool_call_id: 'w3', content: 'Tool call timed out.' },
        { role: 'assistant', content: 'written' },
      ],
    },
    { task_id: 'uuid-2', category: 'travel', response: 'Error: Connection error.', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Connection error.' }] },
  ];
  const [run, failed] = liveMcpRuns(tasks, { source: 'test', agent: 'mcp-copilot', model: 'm', base: Date.parse('2025-07-22T00:00:00Z') });

  it('keeps the generic execute-tool with the real action in its arguments, and how each run ended', () => {
    expect(run).toMatchObject({ id: 'work/uuid-1', outcome: 'answered' });
    expect(failed).toMatchObject({ id: 'travel/uuid-2', outcome: 'error' });
    const calls = callsOf(run as never);
    expect(calls.map((c) => c.name)).toEqual(['route', 'execute-tool', 'execute-tool', 'execute-tool']);
    expect(calls[1]?.arguments).toEqual({ server_name: 'fs', tool_name: 'write_file', params: { path: '/x' } });
  });

  it("reads the wrapped tool's isError and the harness's timeout as failures, with what the tool said", () => {
    const calls = callsOf(run as never);
    expect(calls[0]?.result).toContain('matched_tools');
    expect(calls.slice(1).map((c) => [c.error, c.errorType])).toEqual([
      ["Input validation error: 'file_hash' is a required property", 'tool_error'],
      ['Error executing tool execute-tool: INTERNAL_ERROR', 'tool_error'],
      ['Tool call timed out.', 'TimeoutError'],
    ]);
  });

  it('decodes the Python text of a result, escapes included, to its end when the harness cut it', () => {
    expect(pythonTextContent(String.raw`x content=[TextContent(type='text', text='a\nb \'q\' \u00e9\x41 \\', annotations=None)]`)).toBe("a\nb 'q' éA \\");
    expect(pythonTextContent(String.raw`content=[TextContent(type='text', text="it's cut`)).toBe("it's cut");
    expect(pythonTextContent('Tool call timed out.')).toBeUndefined();
  });
});
