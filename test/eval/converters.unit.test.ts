import { describe, expect, it } from 'vitest';
import { liveMcpRuns, pythonTextContent, type LiveMcpTask } from '../../scripts/corpus/formats/livemcp.js';
import { bfclRun } from '../../scripts/corpus/formats/bfcl.js';
import { miniCliRun } from '../../scripts/corpus/formats/mini-swe-agent-cli.js';
import { openHandsRun } from '../../scripts/corpus/formats/openhands.js';
import { parsePythonCall } from '../../scripts/corpus/formats/python-call.js';
import { sweAgentRun } from '../../scripts/corpus/formats/swe-agent.js';
import { asTau2File, tau2Runs, type Tau2File } from '../../scripts/corpus/formats/tau2.js';
import { tauBenchRun, type TauBenchResult } from '../../scripts/corpus/formats/tau-bench.js';
import { toolathlonLogRun, toolathlonRun, type ToolathlonFile } from '../../scripts/corpus/formats/toolathlon.js';
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

  it('reads the forms leaderboard submitters wrote: a bare array of simulations, the model and agent named at the top', () => {
    const simulation = tau2.simulations?.[0];
    const bare = asTau2File([simulation]);
    expect(tau2Runs(bare as Tau2File, { source: 'test', prefix: 'sub/' })).toMatchObject([{ id: 'sub/7/0', model: 'unknown', agent: 'tau2-agent' }]);
    const named = asTau2File({ domain: 'airline', agent: 'adaptive_agent', model: 'claude-x', simulations: [simulation] });
    expect(tau2Runs(named as Tau2File, { source: 'test', prefix: 'sub/' })).toMatchObject([{ model: 'claude-x', agent: 'adaptive_agent' }]);
    // the harness's own info wins over a name at the top; a name given by the source wins over both
    expect(tau2Runs({ ...tau2, model: 'other', agent: 'other' }, { source: 'test', prefix: 'a/' })[0]).toMatchObject({ model: 'test-model', agent: 'llm_agent' });
    expect(tau2Runs(tau2, { source: 'test', prefix: 'a/', agent: 'given' })[0]?.agent).toBe('given');
    expect(asTau2File('not a results file')).toBeUndefined();
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

describe('the τ-bench converter', () => {
  const call = (id: string, name: string, args: object): object => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
  const traj = [
    { role: 'system', content: 'policy' },
    { role: 'user', content: 'cancel my order #W1' },
    { role: 'assistant', content: null, tool_calls: [call('a', 'get_order_details', { order_id: '#W1' })] },
    { role: 'tool', tool_call_id: 'a', name: 'get_order_details', content: '{"status": "pending"}' },
    { role: 'assistant', content: null, tool_calls: [call('b', 'cancel_pending_order', { order_id: '#W1', reason: 'no longer needed' })] },
    { role: 'tool', tool_call_id: 'b', name: 'cancel_pending_order', content: 'Error: non-pending order cannot be cancelled' },
    { role: 'assistant', content: null, tool_calls: [call('c', 'refund', {})] },
    { role: 'tool', tool_call_id: 'c', name: 'refund', content: 'Unknown action refund' },
    { role: 'assistant', content: 'Done.' },
    { role: 'user', content: 'thanks ###STOP###' },
  ];
  const meta = { id: 'tool-calling/7/0', source: 'test', agent: 'tool-calling', model: 'm', base: Date.parse('2025-06-18T00:00:00Z') };

  it('reads the conversation with the user turns, one call a model turn, and the reward as the outcome', () => {
    const run = tauBenchRun({ task_id: 7, reward: 1, trial: 0, traj } satisfies TauBenchResult, meta);
    expect(run).toMatchObject({ id: 'tool-calling/7/0', outcome: 'pass', recordedTimes: false });
    expect(run.turns.map((t) => [t.kind, t.calls.length])).toEqual([['user', 0], ['model', 1], ['model', 1], ['model', 1], ['model', 0], ['user', 0]]);
    expect(run.turns[0]?.text).toBe('cancel my order #W1');
    expect(tauBenchRun({ reward: 0, traj }, meta).outcome).toBe('fail');
  });

  it('writes the environment\'s Error: and Unknown action answers as failures without a class', () => {
    const calls = callsOf(tauBenchRun({ reward: 0, traj }, meta));
    expect(calls.map((c) => [c.id, c.error === undefined ? 'ok' : c.errorType])).toEqual([
      ['a', 'ok'],
      ['b', null],
      ['c', null],
    ]);
    const spans = decodeTracesData(runToOtlp(tauBenchRun({ reward: 0, traj }, meta))).filter((s) => s.name.startsWith('execute_tool'));
    expect(spans.map((s) => [s.status?.code ?? 0, s.attributes['error.type']])).toEqual([
      [0, undefined],
      [2, undefined],
      [2, undefined],
    ]);
  });

  it('pairs calls recorded without ids with the answers that follow them, and reads Python dict arguments', () => {
    const noIds = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'find_user', arguments: "{'zip': '10108', 'vip': True}" } }] },
      { role: 'tool', name: 'find_user', content: 'user_1' },
      { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'get_user', arguments: "{'user_id': 'user_1'}" } }] },
      { role: 'tool', name: 'get_user', content: 'Error: user not found' },
    ];
    const calls = callsOf(tauBenchRun({ reward: 0, traj: noIds }, meta));
    expect(calls.map((c) => [c.name, c.arguments, c.result ?? c.error, c.id])).toEqual([
      ['find_user', { zip: '10108', vip: true }, 'user_1', undefined],
      ['get_user', { user_id: 'user_1' }, 'Error: user not found', undefined],
    ]);
  });

  it('takes a run neither the user nor a transfer ended as stopped at the step limit', () => {
    const cut = traj.slice(0, 8);
    expect(tauBenchRun({ reward: 0, traj: cut }, meta).outcome).toBe('max_steps');
    const transferred = [...cut, { role: 'assistant', content: null, tool_calls: [call('d', 'transfer_to_human_agents', { summary: 'x' })] }, { role: 'tool', tool_call_id: 'd', content: 'Transfer successful' }];
    expect(tauBenchRun({ reward: 0, traj: transferred }, meta).outcome).toBe('fail');
  });
});

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

describe('the Toolathlon harness log converter', () => {
  const call = (id: string, name: string, args: object): object => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
  const log = {
    status: 'failed',
    config: { task_dir: 'pool/move-files' },
    messages: [
      { role: 'user', content: 'move the files' },
      { role: 'assistant', content: '', tool_calls: [call('a', 'terminal-run_command', { command: 'mv a b' }), call('b', 'filesystem-write_file', { path: 'x' })] },
      { role: 'tool', tool_call_id: 'a', content: items("mv: cannot stat 'a': No such file or directory\n", '\nCommand completed with return code: 1') },
      { role: 'tool', tool_call_id: 'b', content: JSON.stringify({ type: 'text', text: 'Error: Invalid arguments for write_file', annotations: null }) },
    ],
  };
  const run = toolathlonLogRun(log, { id: 'model-y/pool/move-files', model: 'model-y', source: 'test', agent: 'toolathlon', base: Date.parse('2025-06-30T00:00:00Z') });

  it('keeps the harness status as the outcome, the batch and the user message', () => {
    expect(run).toMatchObject({ id: 'model-y/pool/move-files', model: 'model-y', outcome: 'failed', recordedTimes: false });
    expect(run.turns.map((t) => [t.kind, t.calls.length])).toEqual([['user', 0], ['model', 2]]);
    expect(toolathlonLogRun({ messages: [] }, { id: 'i', model: 'm', source: 's', agent: 'a', base: 0 }).outcome).toBe('unknown');
  });

  it('reads failures as the Toolathlon converter does: a non-zero exit without a class, an MCP error as tool_error', () => {
    expect(callsOf(run).map((c) => [c.id, c.errorType])).toEqual([
      ['a', null],
      ['b', 'tool_error'],
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

describe('the BFCL multi-turn converter', () => {
  const entry = {
    id: 'memory_kv_prereq_0-customer-0',
    input_token_count: [[900, 950], [1200, 1300, 1400]],
    output_token_count: [[40, 5], [60, 70, 80]],
    latency: [[1.5, 0.5], [2, 2, 2]],
    inference_log: [
      [{ role: 'state_info', content: '{}' }],
      {
        begin_of_turn_query: [{ role: 'system', content: 'You are...' }, { role: 'user', content: "I'm Ana, I like tea." }],
        step_0: [
          { role: 'assistant', content: "[memory_append(text=\"I'm Ana\")]", reasoning_content: 'store it' },
          { role: 'handler_log', content: 'Successfully decoded model response.', model_response_decoded: ["memory_append(text=\"I'm Ana\")"] },
          { role: 'tool', content: '{"status": "Memory appended."}' },
        ],
        step_1: [
          { role: 'assistant', content: '[]' },
          { role: 'handler_log', content: 'Empty response from the model. Proceed to next turn.', model_response_decoded: [] },
        ],
      },
      {
        begin_of_turn_query: [{ role: 'user', content: 'Replace tea by coffee.' }],
        step_0: [
          { role: 'assistant', content: '...' },
          {
            role: 'handler_log',
            content: 'Successfully decoded model response.',
            model_response_decoded: ["core_memory_replace(key='drink', old='tea', new='coffee\\'s')", { core_memory_retrieve: { key: 'drink' } }],
          },
          { role: 'tool', content: "Error during execution: 'drink'" },
          { role: 'tool', content: '{"value": "tea"}' },
        ],
        step_1: [{ role: 'assistant', content: 'not a call' }, { role: 'handler_log', content: 'Error decoding the model response. Proceed to next turn.' }],
        step_2: [{ role: 'handler_log', content: 'Model has been forced to quit after 20 steps.' }],
      },
    ],
  };
  const run = bfclRun(entry, { id: 'Qwen3-8B/memory_kv_prereq_0-customer-0', source: 'test', agent: 'bfcl', model: 'Qwen/Qwen3-8B', base: Date.parse('2026-01-01T00:00:00Z') });

  it('keeps user turns, decoded calls as JSON arguments, results in order, usage and latency, and a forced quit', () => {
    expect(run.turns.map((t) => [t.kind, t.calls.length])).toEqual([['user', 0], ['model', 1], ['model', 0], ['user', 0], ['model', 2], ['model', 0], ['model', 0]]);
    expect(run.turns[0]?.text).toBe("I'm Ana, I like tea.");
    const calls = callsOf(run);
    expect(calls.map((c) => [c.name, c.arguments])).toEqual([
      ['memory_append', { text: "I'm Ana" }],
      ['core_memory_replace', { key: 'drink', old: 'tea', new: "coffee's" }],
      ['core_memory_retrieve', { key: 'drink' }],
    ]);
    expect(calls.map((c) => c.result ?? `ERR ${c.error}`)).toEqual(['{"status": "Memory appended."}', "ERR Error during execution: 'drink'", '{"value": "tea"}']);
    expect(calls[1]?.errorType).toBeNull();
    expect(run.turns[1]?.usage).toEqual({ input: 900, output: 40 });
    expect((run.turns[1]?.end ?? 0) - (run.turns[1]?.start ?? 0)).toBe(1500);
    expect(run).toMatchObject({ outcome: 'force_quit', recordedTimes: false });
  });

  it('writes the calls of one answer as a batch and an execution error as a failure without a class', () => {
    const spans = decodeTracesData(runToOtlp(run));
    const [evalRun] = runsOf('test', spans);
    expect(evalRun?.calls[1]?.batch).toBe(evalRun?.calls[2]?.batch);
    expect(evalRun?.calls[1]).toMatchObject({ failed: true, errorText: "Error during execution: 'drink'" });
    expect(spans.find((s) => s.attributes['gen_ai.tool.name'] === 'core_memory_replace')?.attributes['error.type']).toBeUndefined();
  });
});

describe('the mini-swe-agent terminal recording converter', () => {
  const T0 = 1_754_627_605;
  const rule = `${'─'.repeat(40)}\r\n`;
  const noise = "04:39:36 - LiteLLM:ERROR: logging.py:1 - Error creating standard logging object\r\nTraceback (most recent call last):\r\n  File \"x.py\", line 1\r\n\r\nImportError: Missing dependency\r\n";
  /** A step as two outputs: the model's answer (with the harness's noise), then the observation. */
  const step = (n: number, command: string, observation: string | undefined): string[] => [
    `\x1b[1mmini-swe-agent (step ${n}, $0.0${n}):\x1b[0m\r\n⠋ Waiting for the LM to respond...\r\x1b[2KTHOUGHT: try\r\n\r\n\`\`\`bash\r\n${command}\r\n\`\`\`\r\n${noise}`,
    ...(observation === undefined ? [] : [`User:\r\n${observation}\r\n${rule}`]),
  ];
  const envelope = (code: number, output: string): string => `<returncode>${code}</returncode>\r\n<output>\r\n${output}\r\n</output>`;
  const chunks = [
    "root@c0ffee:/app# mini -m anthropic/claude-x -t 'Fix the tests' -y\r\n",
    ...step(1, 'pytest tests', envelope(1, '2 failed, 3 passed')),
    ...step(2, 'pytest tests', envelope(1, '1 failed, 4 passed')),
    ...step(3, './serve.sh', 'The last command <command>./serve.sh</command> timed out and has been killed.\r\nPlease try another command.'),
    `\x1b[1mmini-swe-agent (step 4, $0.04):\x1b[0m\r\nTHOUGHT: two actions\r\n\`\`\`bash\r\nls\r\n\`\`\`\r\n\`\`\`bash\r\npwd\r\n\`\`\`\r\nUser:\r\nPlease always provide EXACTLY ONE action in triple backticks, found 2 actions.\r\n${rule}`,
    ...step(5, 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT', '\r\n'),
    "Saved trajectory to '/root/last_mini_run.traj.json'\r\nroot@c0ffee:/app# ",
  ];
  const cast = [JSON.stringify({ version: 2, width: 160, height: 40, timestamp: T0 }), ...chunks.map((c, i) => JSON.stringify([i * 2.5, 'o', c])), JSON.stringify([99, 'i', 'exit\r'])].join('\n');
  const run = miniCliRun(cast, { task_id: 'demo', instruction: 'Fix the tests', failure_mode: 'unset' }, { id: 'demo/run-1', source: 'test', agent: 'mini-swe-agent', model: 'm' });

  it('reads one bash call a step, return codes and timeouts as failures, recorded times, the submission and the model', () => {
    const calls = callsOf(run);
    expect(calls.map((c) => (c.arguments as { command: string }).command)).toEqual(['pytest tests', 'pytest tests', './serve.sh', 'echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT']);
    expect(calls[0]?.error).toBe('<returncode>1</returncode>\n<output>\n2 failed, 3 passed\n</output>');
    expect(calls[1]?.error).toContain('1 failed, 4 passed');
    expect([calls[0]?.errorType, calls[2]?.errorType]).toEqual([null, 'timeout']);
    expect(calls[3]).toMatchObject({ result: '' });
    expect(run.turns.map((t) => t.kind)).toEqual(['user', 'model', 'model', 'model', 'model', 'model']);
    expect(run.turns[4]?.calls).toEqual([]);
    expect(run.turns.some((t) => /LiteLLM|Waiting for the LM/.test(t.text ?? ''))).toBe(false);
    // chunks 3 and 4 (2.5 s apart): the second answer, then its observation
    expect([calls[1]?.start, calls[1]?.end]).toEqual([(T0 + 3 * 2.5) * 1000 + 1, (T0 + 4 * 2.5) * 1000]);
    expect(run).toMatchObject({ model: 'claude-x', outcome: 'submitted', recordedTimes: true });
  });

  it('writes a non-zero exit as a span error without a class, its output the message, so a moving test output stays two outcomes', () => {
    const spans = decodeTracesData(runToOtlp(run));
    const [evalRun] = runsOf('test', spans);
    expect(evalRun?.calls.slice(0, 3).map((c) => c.failed)).toEqual([true, true, true]);
    expect(evalRun?.calls[0]?.errorText).not.toBe(evalRun?.calls[1]?.errorText);
    const tools = spans.filter((s) => s.attributes['gen_ai.tool.name'] === 'bash');
    expect(tools.map((s) => s.attributes['error.type'])).toEqual([undefined, undefined, 'timeout', undefined]);
  });

  it('ends at the harness time limit with the running command unanswered', () => {
    const cut = [JSON.stringify({ version: 2, timestamp: T0 }), JSON.stringify([0, 'o', step(1, 'make', undefined).join('')])].join('\n');
    const timedOut = miniCliRun(cut, { task_id: 'demo', failure_mode: 'agent_timeout' }, { id: 'demo/run-2', source: 'test', agent: 'mini-swe-agent', model: 'm' });
    expect(callsOf(timedOut).map((c) => [c.result, c.error])).toEqual([[undefined, undefined]]);
    expect(timedOut).toMatchObject({ outcome: 'agent_timeout', model: 'm' });
  });
});

describe('the OpenHands completion-log converter', () => {
  const call = (id: string, name: string, args: Record<string, unknown>): Record<string, unknown> => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
  const bash = (command: string): Record<string, unknown> => ({ command });
  const log = {
    fncall_messages: [
      { role: 'system', content: 'You are an agent.' },
      { role: 'user', content: [{ type: 'text', text: 'Fix the failing test.' }] },
      { role: 'assistant', content: 'run it', tool_calls: [call('t1', 'execute_bash', bash('pytest -q'))] },
      { role: 'tool', tool_call_id: 't1', name: 'execute_bash', content: '2 failed\n[Command finished with exit code 1]\n[The command completed with exit code 1.]' },
      { role: 'assistant', content: '', tool_calls: [call('t2', 'str_replace_editor', { command: 'str_replace', path: '/w/a.py', old_str: 'x', new_str: 'y' })] },
      { role: 'tool', tool_call_id: 't2', name: 'str_replace_editor', content: 'ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim in /w/a.py.' },
      { role: 'assistant', content: '', tool_calls: [call('t3', 'execute_bash', bash('python -m http.server'))] },
      { role: 'tool', tool_call_id: 't3', name: 'execute_bash', content: 'Serving HTTP\n[The command has no new output after 30 seconds. You may wait longer to see additional output by sending empty command \'\', send other commands to interact with the current process, or send keys to interrupt/kill the command.]' },
      { role: 'assistant', content: '', tool_calls: [call('t4', 'execute_bash', bash('ls'))] },
      { role: 'tool', tool_call_id: 't4', name: 'execute_bash', content: '[Your command "ls" is NOT executed. The previous command is still running - You CANNOT send new commands until the previous command is completed.]' },
      { role: 'user', content: 'Please continue working on the task.' },
      { role: 'assistant', content: '', tool_calls: [call('t5', 'execute_bash', bash('pytest -q'))] },
      { role: 'tool', tool_call_id: 't5', name: 'execute_bash', content: '5 passed\n[The command completed with exit code 0.]' },
    ],
    fncall_response: { choices: [{ message: { role: 'assistant', content: 'done', tool_calls: [call('t6', 'finish', {})] } }] },
  };
  const run = openHandsRun(log, { id: 'demo__demo-1', source: 'test', agent: 'openhands-codeact', model: 'm', base: Date.parse('2025-03-29T00:00:00Z') });

  it('reads the conversation of the last call, its last action unanswered, exit codes, editor errors and a command still running', () => {
    const calls = callsOf(run);
    expect(calls.map((c) => c.name)).toEqual(['execute_bash', 'str_replace_editor', 'execute_bash', 'execute_bash', 'execute_bash', 'finish']);
    expect([calls[0]?.errorType, calls[1]?.errorType, calls[3]?.errorType]).toEqual([null, null, null]);
    expect(calls[0]?.error).toContain('2 failed');
    expect(calls[2]?.result).toContain('Serving HTTP');
    expect(calls[4]?.result).toContain('5 passed');
    expect(calls[5]).not.toHaveProperty('result');
    expect(run.turns.filter((t) => t.kind === 'user').map((t) => t.text)).toEqual(['Fix the failing test.', 'Please continue working on the task.']);
    expect(run).toMatchObject({ id: 'demo__demo-1', outcome: 'finish', recordedTimes: false });
  });

  it('names a run whose last action is not finish as stopped at the iteration limit, and writes a non-zero exit as a span error without a class', () => {
    const cut = openHandsRun({ ...log, fncall_response: { choices: [{ message: { role: 'assistant', content: '', tool_calls: [call('t6', 'execute_bash', bash('pytest -q'))] } }] } }, { id: 'x', source: 'test', agent: 'a', model: 'm', base: 0 });
    expect(cut.outcome).toBe('max_iterations');
    const spans = decodeTracesData(runToOtlp(run));
    const bashSpans = spans.filter((s) => s.attributes['gen_ai.tool.name'] === 'execute_bash');
    expect(bashSpans.map((s) => s.attributes['error.type'])).toEqual([undefined, undefined, undefined, undefined]);
    const [evalRun] = runsOf('test', spans);
    expect(evalRun?.calls.map((c) => c.failed)).toEqual([true, true, false, true, false, false]);
  });
});

describe('Python call text (BFCL prompt mode)', () => {
  it('reads keyword literals: strings with escapes, numbers, booleans, None, lists and dicts', () => {
    expect(parsePythonCall("f(a='x\\'y\\n', b=\"q\", c=-1.5, d=True, e=None, f=[1, (2, 3)], g={'k': [False]})")).toEqual({
      name: 'f',
      args: { a: "x'y\n", b: 'q', c: -1.5, d: true, e: null, f: [1, [2, 3]], g: { k: [false] } },
    });
    expect(parsePythonCall('Mod.call()')).toEqual({ name: 'Mod.call', args: {} });
    expect(parsePythonCall('f(x)')).toBeUndefined();
    expect(parsePythonCall("f(a='open")).toBeUndefined();
  });
});
