/**
 * The evidence principle (docs/how-it-decides.md): a critical needs proof that the agent got no
 * new information, the same call with the same outcome; a failure's outcome is what it said, and a
 * result's identity includes the targets its call's arguments name. Weaker evidence warns.
 */
import { describe, expect, it } from 'vitest';
import { EVIDENCE_KINDS, RULES } from '../../src/detector/rules.js';
import { runAgent, times, type ScriptItem, type Step } from '../support/agent-run.js';

const rules = (run: ReturnType<typeof runAgent>): string[] => run.detections.map((d) => `${d.callIndex}:${d.rule}:${d.level}`);

describe('the registry states what each rule rests on', () => {
  it('gives every rule a kind of evidence, and a default stop to a weaker kind only where the corpus showed it safe', () => {
    for (const rule of RULES) {
      expect(EVIDENCE_KINDS, rule.name).toContain(rule.evidenceKind);
      if (rule.evidenceKind !== 'nothing-new' && Number.isFinite(rule.defaults.critical)) expect(rule.stopShownSafe, rule.name).toMatch(/corpus/);
    }
  });
});

describe('a failure is what it said, not only its class', () => {
  const edit = (i: number): Step => ({ tool: 'bash', args: { command: `sed -i 's/v${i}/v${i + 1}/' src/parse.py` }, result: '' });
  // a shell tool reports a non-zero exit as a failure with no class: the output is the message
  const pytest = (output: string): Step => ({ tool: 'bash', args: { command: 'pytest tests/test_parse.py' }, error: { message: output } });

  it('pytest whose output moves between edits (2 failed, 1 failed, another test failing) is not stopped', () => {
    const outputs = [
      '2 failed, 5 passed in 0.41s\nFAILED tests/test_parse.py::test_empty\nFAILED tests/test_parse.py::test_nested',
      '2 failed, 5 passed in 0.38s\nFAILED tests/test_parse.py::test_empty\nFAILED tests/test_parse.py::test_nested',
      '1 failed, 6 passed in 0.35s\nFAILED tests/test_parse.py::test_nested',
      '1 failed, 6 passed in 0.36s\nFAILED tests/test_parse.py::test_nested',
      '1 failed, 6 passed in 0.33s\nFAILED tests/test_parse.py::test_unicode',
      '1 failed, 6 passed in 0.31s\nFAILED tests/test_parse.py::test_unicode',
      '1 failed, 6 passed in 0.39s\nFAILED tests/test_parse.py::test_escape',
      '1 failed, 6 passed in 0.32s\nFAILED tests/test_parse.py::test_escape',
    ];
    const run = runAgent(outputs.flatMap((o, i) => [edit(i), pytest(o)]));
    expect(run.first('critical')).toBeUndefined();
    expect(rules(run)).toEqual([]);
  });

  it('the same test failing the same way after every fix that did not apply is still found (durations are noise)', () => {
    const fixRefused = (i: number): Step => ({ tool: 'apply_patch', args: { patch: `attempt ${i}` }, error: { message: 'patch does not apply' } });
    const run = runAgent(times(8, (i) => [fixRefused(i), pytest(`1 failed, 6 passed in 0.${30 + i}s\nFAILED tests/test_parse.py::test_nested`)]).flat());
    const d = run.detections.filter((x) => x.toolName === 'bash');
    expect(d.map((x) => [x.callIndex, x.level, x.rule])).toEqual([
      [6, 'warning', 'failing_recheck'],
      [10, 'critical', 'failing_recheck'],
    ]);
  });

  it('the same test failing the same way after each new fix that applied verifies each fix: quiet', () => {
    const run = runAgent(times(8, (i) => [edit(i), pytest(`1 failed, 6 passed in 0.${30 + i}s\nFAILED tests/test_parse.py::test_nested`)]).flat());
    expect(rules(run)).toEqual([]);
  });

  it('the same malformed call failing the same way is stopped by the 5th', () => {
    const malformed: Step = { tool: 'str_replace_editor', args: { command: 'create', file_text: 'x = 1' }, error: { message: "Parameter 'path' is required for command: create" } };
    const run = runAgent(times(6, malformed));
    expect(run.detections.find((d) => d.level === 'critical')).toMatchObject({ rule: 'repeated_failure', callIndex: 5, count: 5 });
  });

  it('the same call failing in a row while its message changes is warned, a weaker evidence', () => {
    const messages = ['connection reset by peer', 'socket hang up', 'upstream unavailable', 'bad gateway'];
    const run = runAgent(messages.map((m) => ({ tool: 'deploy', args: { env: 'prod' }, error: { message: m } })));
    expect(rules(run)).toEqual(['3:changing_failure:warning']);
  });
});

describe('a target is not noise', () => {
  const uuid = (i: number): string => `5983378${i}-2cf9-4fdf-8782-e53db20768a${i}`;
  // what a Notion MCP server answers: the block, its id, its edit time
  const confirmation = (id: string, i: number): string =>
    JSON.stringify({ object: 'block', id, type: 'paragraph', last_edited_time: `2026-11-21T10:0${i}:00.000Z`, paragraph: { rich_text: [{ plain_text: 'Status: done' }] } });

  it('six updates of six different blocks, confirmations alike but for the id, are six pieces of work', () => {
    const run = runAgent(times(6, (i) => ({ tool: 'notion_update_block', args: { block_id: uuid(i), content: 'Status: done' }, result: confirmation(uuid(i), i) })));
    expect(run.detections).toEqual([]);
  });

  it('deleting six different records, each answered "1 deleted", is a batch, not a paraphrase', () => {
    const run = runAgent(times(6, (i) => ({ tool: 'db_delete', args: { table: 'orders', key: 1000 + i }, result: { deleted: 1 } })));
    expect(run.detections).toEqual([]);
  });

  it('rewording one question, the same answer each time, is still no progress', () => {
    const queries = ['refund policy for damaged items', 'damaged items refund policy', 'the refund policy for damaged items', 'refund policy damaged items', 'policy for refund of damaged items', 'damaged items: refund policy'];
    const run = runAgent(queries.map((q) => ({ tool: 'kb_search', args: { query: q, space: 'SUPPORT' }, result: 'Refunds within 30 days of delivery.' })));
    expect(run.detections.map((d) => [d.rule, d.level, d.callIndex])).toEqual([['same_result', 'warning', 5]]);
  });

  it('the same update of the same block, the same answer, back to back, is stopped at the 3rd (a write resent)', () => {
    const run = runAgent(times(6, () => ({ tool: 'notion_update_block', args: { block_id: uuid(1), content: 'Status: done' }, result: confirmation(uuid(1), 1) })));
    expect(run.first('critical')).toBe(3);
    expect(run.detections[0]).toMatchObject({ rule: 'back_to_back', level: 'critical', count: 3 });
  });

  it('the same update of the same block with a new read before each is not back to back, and not stopped', () => {
    const update: Step = { tool: 'notion_update_block', args: { block_id: uuid(1), content: 'Status: done' }, result: confirmation(uuid(1), 1) };
    const run = runAgent(times(5, (i) => [{ tool: 'notion_get_page', args: { page: `p${i}` }, result: `page ${i}` }, update]).flat());
    expect(run.first('critical')).toBeUndefined();
    expect(rules(run).filter((d) => d.includes('back_to_back'))).toEqual([]);
  });
});

describe("a command line's operands are its targets (toolathlon-early git-milestone, Curriculum-Ta)", () => {
  const shell = (command: string, text: string): Step => ({ tool: 'terminal-run_command', args: { command }, result: [{ type: 'text', text, annotations: null }] });
  const notFound = '{"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}';

  it('curl to six different repository ids, each answering the same Not Found, is a probe of six targets', () => {
    const run = runAgent([999, 1001, 1002, 1010, 1100, 10000].map((id) => shell(`curl -s https://api.github.com/repositories/${id}`, notFound)));
    expect(rules(run)).toEqual([]);
  });

  it('thirty moves of thirty files, each answered alike, are thirty writes', () => {
    const run = runAgent(times(30, (i) => shell(`mv "student${i}_os_hw3.c" "student${i}-cs-${2021302000 + i}-OS-HW3.c"`, '\nCommand completed with return code: 0')));
    expect(rules(run)).toEqual([]);
  });

  it('the same curl of one repository, the same answer, is still stopped at the 5th', () => {
    const run = runAgent(times(6, () => shell('curl -s https://api.github.com/repositories/1000', notFound)));
    expect(run.first('critical')).toBe(5);
  });

  it('one command reworded (its options) on the same operands, the same answer each time, is still warned', () => {
    const options = ['-rn', '-rin', '-rnw', '-rnI', '-rnH', '-rniw'];
    const run = runAgent(options.map((o) => shell(`grep ${o} "connection timeout" /var/log/app/server.log`, 'grep: no match for connection timeout')));
    expect(run.detections.map((d) => [d.rule, d.level, d.callIndex])).toEqual([['same_result', 'warning', 5]]);
  });
});

describe("a call's own execution figures are noise (toolathlon-3 academic-warning)", () => {
  const query = 'SELECT student_id, name, score_drop FROM drops WHERE drop_percentage > 25 ORDER BY drop_percentage DESC';
  const answer = (bytes: number, ms: number, rows = 30): string =>
    `Query executed successfully.\nTotal rows: ${rows}, Returned: ${rows}\nBytes processed: ${bytes}, Execution time: ${ms}ms\n\nSample results (first 5 rows):\nRow 1: {'student_id': 'S060', 'score_drop': 23.8}`;
  const run = (bytes: readonly number[], rows: readonly number[] = bytes.map(() => 30)) =>
    runAgent(bytes.map((b, i) => ({ tool: 'bigquery_run_query', args: { query }, result: { type: 'text', text: answer(b, 500 + i * 7, rows[i]) } })));

  it('the same query answered with the same rows, first read and then from the cache (Bytes processed 32480, then 0), is the same answer: stopped at the 5th', () => {
    const r = run([32480, 0, 0, 0, 0, 0]);
    expect(rules(r).slice(0, 1)).toEqual(['3:identical_calls:warning']);
    expect(r.first('critical')).toBe(5);
  });

  it('the same query whose rows changed is progress, whatever the figures', () => {
    expect(rules(run([32480, 0, 0, 0, 0, 0], [30, 31, 32, 33, 34, 35]))).toEqual([]);
  });
});

describe('a rewording is not new content', () => {
  const facts = [
    'Michael is 35, lives in Seattle and works as a freelance graphic designer who likes sleek tools.',
    'He wants an espresso machine that gives a cafe-like result without barista training.',
    'Budget matters: he asks about discounts, bundles and seasonal promotions on grinders.',
    'Shipping to Seattle worries him because his building has no concierge for parcels.',
    'A friend bought an air fryer from the shop last month and praised the customer service.',
    'His kitchen counter is narrow, so the machine must fit under low wall cabinets.',
  ];

  it('different facts written turn after turn, each acknowledged alike, are different work', () => {
    const run = runAgent(facts.flatMap((text, i) => [{ user: `message ${i}: ${text}` }, { tool: 'memory_append', args: { text }, result: { status: 'Memory appended.' } }]));
    expect(run.detections).toEqual([]);
  });

  it('one request reworded turn after turn, the same answer each time, is warned', () => {
    const summaries = [
      'The user wants to add travel insurance to an existing booking, which the policy does not allow.',
      'The user still wants to add travel insurance to the existing booking; the policy does not allow it.',
      'User again asks to add travel insurance to an existing booking, not allowed by the policy.',
      'The user insists on adding travel insurance to the existing booking, which policy does not allow.',
      'Once more the user wants travel insurance added to an existing booking; the policy does not allow it.',
    ];
    const run = runAgent(summaries.flatMap((summary, i) => [{ user: `please, attempt ${i}` }, { tool: 'transfer_to_human_agents', args: { summary }, result: 'Transfer successful' }]));
    expect(run.detections.map((d) => [d.rule, d.level, d.callIndex])).toEqual([['same_result', 'warning', 5]]);
  });

  it('a draft that only grows, refused the same way lap after lap between other calls, is found', () => {
    const base = 'Riur Nxkglre, 35, enjoys hiking and photography, prefers window seats and vegetarian meals';
    const script: ScriptItem[] = [];
    for (let lap = 0; lap < 8; lap++) {
      const text = `${base}${', and more'.repeat(lap)} (lap ${lap})`;
      script.push({ tool: 'memory_search', args: { query: `profile details ${lap}` }, result: { hits: [{ id: 0, score: 0.5 + lap / 100 }] } });
      script.push({ tool: 'memory_update', args: { id: 0, text }, result: { error: 'Entry length exceeds maximum length of 300 characters.' } });
      script.push({ tool: 'archive_add', args: { text }, result: { id: 40 + lap } });
    }
    expect(runAgent(script).detections.find((d) => d.toolName === 'memory_update')).toMatchObject({ rule: 'same_result', level: 'warning' });
  });

  describe('a text cut shorter after the same refusal acts on it', () => {
    const words = 'Riur Nxkglre is 35, enjoys hiking and photography, prefers window seats, vegetarian meals and quiet hotels near the old town'.split(' ');
    const refused = { error: 'Entry length exceeds maximum length of 300 characters.' };
    const drafts = (lengths: readonly number[]): ScriptItem[] => lengths.map((n) => ({ tool: 'memory_update', args: { id: 12, text: words.slice(0, n).join(' ') }, result: refused }));

    it('trimmed draft after draft toward the limit: not warned', () => {
      expect(runAgent(drafts([20, 19, 18, 17, 16, 15, 14, 13])).detections).toEqual([]);
    });

    it('a draft that goes back to a longer one is a rewording again, and is warned', () => {
      const run = runAgent(drafts([16, 15, 17, 14, 18, 13, 19, 12]));
      expect(run.detections.map((d) => [d.rule, d.level])).toContainEqual(['same_result', 'warning']);
      expect(run.detections.every((d) => d.level === 'warning')).toBe(true);
    });
  });
});

describe('time alone tells nothing new', () => {
  it('the identical call and answer five times, minutes apart, is stopped at the 5th; four stay quiet', () => {
    const check: Step = { tool: 'get_deployment', args: { id: 'prod' }, result: 'rolling out 2/5 replicas', idleMs: 5 * 60_000 };
    expect(runAgent(times(4, check)).detections).toEqual([]);
    expect(runAgent(times(5, check)).detections.map((d) => [d.rule, d.level, d.callIndex])).toEqual([['identical_calls', 'critical', 5]]);
  });
});

describe('a generic tool is as many tools as the actions it runs', () => {
  // an MCP router: one tool, the server and the tool to run in its arguments
  const call = (tool: string, params: unknown, error: string): Step => ({ tool: 'execute-tool', args: { server_name: 'text-editor', tool_name: tool, params }, error: { message: error } });

  it('different inner tools failing with one error class do not add up', () => {
    const run = runAgent([
      call('edit_text_file_contents', { files: [{ path: '/a.ts' }] }, "Input validation error: 'file_hash' is a required property"),
      call('get_text_file_contents', { files: [{ path: '/a.ts' }] }, "Input validation error: 'file_path' is a required property"),
      call('get_text_file_contents', { files: [{ file_path: '/a.ts' }] }, "Input validation error: 'ranges' is a required property"),
      call('edit_text_file_contents', { files: [{ path: '/a.ts', hash: 'x' }] }, "Input validation error: 'contents' is a required property"),
      call('write_file', { path: '/a.ts' }, "Input validation error: 'content' is a required property"),
    ]);
    expect(run.detections).toEqual([]);
  });

  it('one inner tool failing the same way over changing arguments is still found', () => {
    const run = runAgent(times(5, (i) => call('edit_text_file_contents', { files: [{ path: `/a${i}.ts` }] }, "Input validation error: 'file_hash' is a required property")));
    expect(run.detections.map((d) => [d.rule, d.level, d.callIndex])).toEqual([['error_class', 'warning', 4]]);
  });
});

describe('loops that stay stuck are stopped', () => {
  const ls: Step = { tool: 'bash', args: { command: 'ls /workspace/output' }, result: '[]' };

  it('ls answering [] sixteen times is stopped at the 5th', () => {
    const run = runAgent(times(16, ls));
    expect(run.detections.find((d) => d.level === 'critical')).toMatchObject({ rule: 'identical_calls', callIndex: 5, count: 5 });
  });

  it('with only other repeats between (a cat of a file that did not change), still stopped by the 5th ls', () => {
    const cat: Step = { tool: 'bash', args: { command: 'cat /workspace/task.md' }, result: 'Write the report to /workspace/output.' };
    const grep: Step = { tool: 'bash', args: { command: 'grep -r report /workspace' }, result: '/workspace/task.md: Write the report' };
    // the cat and the grep ran once before the first ls: after that, nothing between the ls calls is new
    const script: ScriptItem[] = [cat, grep, ls, cat, ls, grep, cat, ls, grep, ls, cat, grep, ls, cat, ls];
    const run = runAgent(script);
    const lsAt = script.map((s, i) => (s === ls ? i + 1 : 0)).filter((i) => i > 0);
    expect(run.first('critical')).toBeLessThanOrEqual(lsAt[4] as number);
  });

  // Issue 27: a re-read after edits elsewhere "may warn, and stops only as the corpus shows safe":
  // a coding agent's reruns after its own edits show it is not (openhands-claude35,
  // how-it-decides.md "What changed in session 5"); the same answer after each write is quiet.
  it('the identical call with new work between its repetitions is not a loop', () => {
    const cat: Step = { tool: 'read_file', args: { path: 'src/app.ts' }, result: 'export const app = 1;' };
    const script = times(8, (i) => [{ tool: 'write_file', args: { path: `src/part${i}.ts`, text: `export const p${i} = ${i};` }, result: 'ok' }, cat]).flat();
    expect(runAgent(script).detections.filter((x) => x.toolName === 'read_file')).toEqual([]);
  });
});

describe('what the user says is information', () => {
  const check: Step = { tool: 'get_order', args: { order_id: 'W-1207' }, result: { status: 'processing', eta: '2026-11-24' } };

  it('a re-check the user asked for, round after round, is not a loop', () => {
    const asks = ['Can you check my order W-1207?', 'Please recheck it now, the shop said it shipped.', 'Could you look again? I got an email.', 'One more check please, it must have moved by now.', 'Please recheck right now.', 'Check once more, I am at the door.'];
    const run = runAgent(asks.flatMap((user) => [{ user }, check]));
    expect(run.detections).toEqual([]);
  });

  it('the same call every turn while the user says nothing new is still a loop, stopped by the 5th', () => {
    const run = runAgent(times(6, () => [{ user: 'Please try again.' }, check]).flat());
    expect(run.detections.find((d) => d.level === 'critical')).toMatchObject({ rule: 'identical_calls', callIndex: 5, count: 5 });
  });

  it('a message heard again (whitespace and case aside, as a model input holding the whole conversation repeats it) adds nothing', () => {
    const script: ScriptItem[] = [{ user: 'Where is my order W-1207?' }, check];
    for (let i = 0; i < 5; i++) script.push({ user: 'Where is my order W-1207?' }, { user: ' where is my  order W-1207? ' }, check);
    expect(runAgent(script).first('critical')).toBe(5);
  });

  describe('an entry rewritten with what each new message said, refused alike (bfcl-memory-qwen3 vector_prereq_26)', () => {
    const refused = { error: 'Entry length exceeds maximum length of 300 characters.' };
    const facts = ['studies computer science in the fourth year', 'aims at software engineering roles', 'goes to career fairs on campus', 'is drawn to research on immersive media', 'led two campus clubs', 'has student loans to repay'];
    const entry = (n: number): string => `User ${facts.slice(0, n + 1).join(', ')}.`;

    it('one write per new user message, each longer by what the message added: not warned', () => {
      const script = facts.flatMap((fact, i) => [{ user: `Also, I ${fact} (${i}).` }, { tool: 'core_memory_update', args: { vec_id: 1, new_text: entry(i) }, result: refused }]);
      expect(runAgent(script).detections).toEqual([]);
    });

    it('the same growing entry resent once without a new message between is still warned', () => {
      // before the 5th write the user repeats the 4th message: nothing new prompted that write
      const said = (i: number): string => (i === 4 ? said(3) : `Also, I ${facts[i] ?? ''} (${i}).`);
      const run = runAgent(facts.flatMap((_, i) => [{ user: said(i) }, { tool: 'core_memory_update', args: { vec_id: 1, new_text: entry(i) }, result: refused }]));
      expect(run.detections.map((d) => [d.rule, d.level])).toEqual([['same_result', 'warning']]);
    });
  });

  it('a loop across the user\'s new messages is warned, never stopped: the same answer to reworded calls', () => {
    const turns = times(6, (i) => [{ user: `I still need help with the insurance, attempt ${i + 1}.` }, { tool: 'transfer_to_human', args: { summary: `user asks about insurance again (${i + 1})` }, result: 'Transfer successful' }]).flat();
    const run = runAgent(turns);
    expect(run.detections.map((d) => [d.rule, d.level])).toEqual([['same_result', 'warning']]);
  });
});

describe('a batch sent again whole, every call failing as before, is the same information again', () => {
  const keys = ['employer', 'salary', 'savings_goal', 'bank'];
  // writes that each fail because the key is taken: the failure says so every time
  const failingAdds = (): Step[] => keys.map((key) => ({ tool: 'core_memory_add', args: { key, value: `${key} noted` }, error: { message: 'Key name must be unique.' } }));
  const resent = (script: readonly ScriptItem[]): string[] => runAgent(script).detections.filter((d) => d.rule === 'resent_batch').map((d) => `${d.callIndex}:${d.level}:${d.count}`);

  it('four writes failing alike, resent twice after the first round: warned at the 2nd failing lap, stopped at the 4th', () => {
    const firstRound: Step[] = keys.map((key) => ({ tool: 'core_memory_add', args: { key, value: `${key} noted` }, result: { status: 'Key added.' } }));
    const run = runAgent([firstRound, failingAdds(), failingAdds(), { tool: 'archival_memory_add', args: { text: 'moved on' }, result: { id: 7 } }]);
    expect(run.detections.map((d) => [d.rule, d.level, d.callIndex, d.count])).toEqual([['resent_batch', 'warning', 12, 2]]);
    expect(resent([failingAdds(), failingAdds(), failingAdds(), failingAdds()])).toEqual(['8:warning:2', '16:critical:4']);
  });

  it('a two-pass batch that succeeded is not a loop: reads, or writes each acknowledged with a new id (bfcl-memory-qwen3 vector_prereq_34)', () => {
    const writes = (from: number): Step[] => ['Wash dishes tonight.', 'Separate laundry colors.', 'Fix the leaky sink.'].map((text, k) => ({ tool: 'archival_memory_add', args: { text }, result: { id: from + k } }));
    expect(runAgent([writes(0), writes(3)]).detections).toEqual([]);
    const reads = (): Step[] => ['a.txt', 'b.txt'].map((path) => ({ tool: 'read_file', args: { path }, result: { text: `${path} v1` } }));
    expect(runAgent([reads(), reads()]).detections).toEqual([]);
  });

  it('a batch whose failures changed, that a new user message asked for again, or with a call that succeeded, is not counted', () => {
    const failing = (n: number): Step[] => keys.map((key) => ({ tool: 'kv_put', args: { key }, error: { message: `upstream busy, retry in ${key === 'bank' ? n : 1} minutes` } }));
    expect(resent([failing(1), failing(2), failing(3)])).toEqual([]);
    expect(resent([failingAdds(), { user: 'I freed those keys, please try again.' }, failingAdds()])).toEqual([]);
    const mixed = (): Step[] => [...failingAdds().slice(0, 3), { tool: 'core_memory_add', args: { key: 'bank', value: 'bank noted' }, result: { status: 'Key added.' } }];
    expect(resent([mixed(), mixed()])).toEqual([]);
    // the control: the same failing batch sent again, nobody asking
    expect(resent([failing(1), failing(1)])).toEqual(['8:warning:2']);
  });

  describe('a result that says error is a refusal as much as a failure is (bfcl-memory-qwen3 rec_sum_prereq_28)', () => {
    // the memory tools answer a refused write with an ordinary result `{"error": ...}`, the span not failing
    const refusedAdds = (): Step[] => keys.map((key) => ({ tool: 'core_memory_add', args: { key, value: `${key} noted` }, result: { error: 'Key name must be unique.' } }));

    it('four writes refused alike, resent twice after the first round: warned at the 2nd refused lap, stopped at the 4th', () => {
      const firstRound: Step[] = keys.map((key) => ({ tool: 'core_memory_add', args: { key, value: `${key} noted` }, result: { status: 'Key added.' } }));
      expect(resent([firstRound, refusedAdds(), refusedAdds()])).toEqual(['12:warning:2']);
      expect(resent([refusedAdds(), refusedAdds(), refusedAdds(), refusedAdds()])).toEqual(['8:warning:2', '16:critical:4']);
      expect(resent(['{"error": "Key name must be unique."}', '{ "error" : "Key name must be unique." }'].map((text) => keys.map((key) => ({ tool: 'core_memory_add', args: { key }, result: text }))))).toEqual(['8:warning:2']);
    });

    it('a batch resent whose answers only mention an error, or hold an empty one, is not counted', () => {
      const answers = [{ status: 'Key added.', error: null }, { status: 'Key added.', error: '' }, { status: 'Key added.', note: { error: 'none' } }, 'error: none'];
      for (const result of answers) {
        const batch = (): Step[] => keys.map((key) => ({ tool: 'core_memory_add', args: { key }, result }));
        expect(resent([batch(), batch()]), JSON.stringify(result)).toEqual([]);
      }
    });
  });
});

describe('a re-run right after a write that applied verifies that write (swe-agent-lm32b-2 django-11728)', () => {
  const script: Step = { tool: 'bash', args: { command: 'cd /repo && python reproduce.py' }, result: 'Pattern: ^(?P<a>\\w+)/b/(\\w+)$\nReplaced: ^<a>/b/(\\w+)$' };
  const view: Step = { tool: 'read_file', args: { path: '/repo/django/contrib/admindocs/utils.py' }, result: '148 def replace_named_groups(pattern):\n149     r"""' };

  it('is quiet: the script, a re-read, the script, a new edit that applied, the script again', () => {
    const edit: Step = {
      tool: 'str_replace_editor',
      args: { command: 'str_replace', path: '/repo/django/contrib/admindocs/utils.py', old_str: 'for start, end, group_name in', new_str: 'for start, end, group_name in sorted(' },
      result: 'The file /repo/django/contrib/admindocs/utils.py has been edited.',
    };
    const run = runAgent([view, script, view, script, edit, script]);
    expect(rules(run)).toEqual([]);
  });

  it('still warns when the new call between is a read (tau2-gemma-domains resultados_final/11/0)', () => {
    const order: Step = { tool: 'get_order_details', args: { order_id: 'ORD-006' }, result: { order_id: 'ORD-006', status: 'pending', total: '350.0', items: ['P002'] } };
    const user: Step = { tool: 'get_user_details', args: { user_id: 'U005' }, result: { user_id: 'U005', name: 'Ana Ruiz', status: 'active' } };
    const run = runAgent([order, user, order, order]);
    expect(rules(run)).toEqual(['4:recheck:warning']);
  });

  it('still warns when the write between did not apply', () => {
    const refused: Step = { tool: 'str_replace_editor', args: { command: 'str_replace', path: '/repo/a.py', old_str: 'y', new_str: 'z' }, error: { message: 'No replacement was performed' } };
    const run = runAgent([view, script, view, script, refused, script]);
    expect(rules(run)).toEqual(['6:recheck:warning']);
  });
});
