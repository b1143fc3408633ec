/**
 * Loop shapes seen in real agent runs (issue 14; test/fixtures/real/FINDINGS.md) and the honest
 * shapes next to them that must stay quiet. The real runs themselves are scored by `npm run eval`
 * and held by test/eval; these are the shapes, small enough to read.
 */
import { describe, expect, it } from 'vitest';
import { runAgent, type ScriptItem, type Step } from '../support/agent-run.js';

const times = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));
const rules = (run: ReturnType<typeof runAgent>): string[] => run.detections.map((d) => `${d.callIndex}:${d.rule}:${d.level}`);

describe('a rotation of re-reads (nothing new, call after call)', () => {
  // A coding agent that is stuck views the same eight snippets and re-runs the same empty grep, in
  // the same order, lap after lap: no exact repeat in a row, no lap short enough for the cycle rule.
  const lap: Step[] = [
    ...times(7, (i) => ({ tool: 'str_replace_editor', args: { command: 'view', path: `/repo/mod.py`, view_range: [i * 40, i * 40 + 40] }, result: `lines ${i}` })),
    { tool: 'bash', args: { command: 'grep -rn "def resolve" /repo/pkg' }, result: '' },
    { tool: 'bash', args: { command: 'find /repo -name "*.cfg"' }, result: '/repo/setup.cfg' },
  ];
  it('warns at the 5th call in a row that repeats an earlier one, stops at the 10th', () => {
    const run = runAgent([...lap, ...lap, ...lap]);
    const d = run.detections.filter((x) => x.rule === 'nothing_new');
    expect(d.map((x) => [x.callIndex, x.level, x.count])).toEqual([
      [lap.length + 5, 'warning', 5],
      [lap.length + 10, 'critical', 10],
    ]);
    expect(d[0]).toMatchObject({ kind: 'no_progress', evidence: 'arguments+result' });
    expect(d[0]?.message).toContain('brought nothing new');
  });

  it('one new call (an edit, a new search) ends the drought: re-reading around real work is quiet', () => {
    const script: Step[] = [];
    for (let round = 0; round < 6; round++) {
      script.push(...lap.slice(0, 4));
      script.push({ tool: 'str_replace_editor', args: { command: 'str_replace', path: '/repo/mod.py', old_str: `v${round}`, new_str: `v${round + 1}` }, result: 'File edited' });
    }
    expect(rules(runAgent(script)).filter((r) => r.includes('nothing_new'))).toEqual([]);
  });

  it('the same call twice in one parallel batch is one call, not a repeat', () => {
    const batch = times(6, () => ({ tool: 'lookup', args: { id: 'A-1' }, result: { state: 'open' } }));
    const script: ScriptItem[] = [batch, { tool: 'lookup', args: { id: 'B-2' }, result: { state: 'closed' } }];
    expect(runAgent(script).detections).toEqual([]);
  });
});

describe('fix → verify whose verification keeps failing the same way', () => {
  const edit = (i: number): Step => ({ tool: 'file_edit', args: { path: 'src/app.py', patch: `attempt ${i}` }, result: 'File written' });
  const failingTest = (message: string): Step => ({ tool: 'pytest', args: { target: 'tests/test_app.py' }, error: { type: 'ValueError', message } });

  // A new fix that applied before each run is what the run verifies: quiet however long (how-it-decides.md
  // "What changed in session 6": openhands-claude35 astropy-14369, matplotlib-24026, sympy-13031).
  it('each fix different and applied, the same failure after each: quiet', () => {
    const run = runAgent(times(10, (i) => [edit(i), failingTest('ValueError: bad literal for int() with base 10')]).flat());
    expect(run.detections.filter((x) => x.toolName === 'pytest')).toEqual([]);
  });

  it('fixes that do not apply, the same failure after each: warned at the 3rd, stopped at the 5th', () => {
    const refused = (i: number): Step => ({ tool: 'file_edit', args: { path: 'src/app.py', patch: `attempt ${i}` }, error: { type: 'EditError', message: 'old text not found' } });
    const run = runAgent(times(6, (i) => [refused(i), failingTest('ValueError: bad literal for int() with base 10')]).flat());
    const d = run.detections.filter((x) => x.toolName === 'pytest');
    expect(d.map((x) => [x.callIndex, x.level, x.rule])).toEqual([
      [6, 'warning', 'failing_recheck'],
      [10, 'critical', 'failing_recheck'],
    ]);
  });

  it('the same fix sent again and again, the same failure after each: nothing new, stopped', () => {
    const run = runAgent(times(6, () => [edit(0), failingTest('ValueError: bad literal for int() with base 10')]).flat());
    expect(rules(run).filter((d) => d.includes('critical')).slice(0, 2)).toEqual(['8:cycle:critical', '10:repeated_failure:critical']);
  });

  it('a failure that changes after each edit stays quiet', () => {
    const failures = ['ImportError: cannot import name parse', 'NameError: name tokens is not defined', 'TypeError: unsupported operand', 'KeyError: missing header', 'AttributeError: no attribute strip', 'IndexError: list index out of range', 'ZeroDivisionError: division by zero', 'RecursionError: maximum depth exceeded'];
    const run = runAgent(failures.map((f, i) => [edit(i), { tool: 'pytest', args: { target: 'tests/test_app.py' }, error: { type: f.split(':')[0] as string, message: f } }]).flat());
    expect(rules(run).filter((d) => d.includes('repeated_failure'))).toEqual([]);
  });

  // The same successful answer after each of the agent's own edits is its verification (DESIGN:
  // fix-and-verify cycles stay quiet); only the same failure after each fix is warned.
  it('a verification that succeeds with the same output after every edit stays quiet', () => {
    const run = runAgent(times(9, (i) => [edit(i), { tool: 'run_tests', args: { target: 'all' }, result: '1 failed, 41 passed: test_parse' }]).flat());
    expect(run.detections.filter((x) => x.toolName === 'run_tests')).toEqual([]);
  });

  it('the same answer with one unrelated call inside the streak is still warned and stopped', () => {
    const check: Step = { tool: 'run_tests', args: { target: 'all' }, result: '1 failed, 41 passed: test_parse' };
    const read: Step = { tool: 'read_file', args: { path: 'src/app.py' }, result: 'def parse(text):' };
    const run = runAgent([check, check, read, check, check, check]);
    expect(run.detections.filter((x) => x.toolName === 'run_tests').map((x) => [x.callIndex, x.level])).toEqual([
      [4, 'warning'],
      [6, 'critical'],
    ]);
  });

  // The check right after an edit that applied verifies that edit and weighs nothing (session 7,
  // swe-agent-lm32b-2 django-11728); the checks after it still count.
  it('with an edit that applied as the call inside, the check after it weighs nothing: one check later', () => {
    const check: Step = { tool: 'run_tests', args: { target: 'all' }, result: '1 failed, 41 passed: test_parse' };
    const run = runAgent([check, check, edit(0), check, check, check, check]);
    expect(run.detections.filter((x) => x.toolName === 'run_tests').map((x) => [x.callIndex, x.level])).toEqual([
      [5, 'warning'],
      [7, 'critical'],
    ]);
  });

  it('honest rounds: the output moves, or repeats up to four times before it moves', () => {
    const outputs = ['3 failed', '3 failed', '3 failed', '3 failed', '1 failed', '1 failed', '0 failed'];
    const run = runAgent(outputs.map((o, i) => [edit(i), { tool: 'run_tests', args: { target: 'all' }, result: o }]).flat());
    expect(rules(run)).toEqual([]);
  });
});

describe('the same failing call with unrelated, varying calls between', () => {
  const declined: Step = { tool: 'charge_card', args: { order: 'o-17', amount: 42 }, error: { type: 'PaymentDeclined', message: 'card declined' } };
  // A new call that succeeded may have changed what the failing call meets, and call hashes cannot
  // tell a read from a write: past one such call in the streak, the retry is not counted.
  it('is quiet with a new successful call before each retry', () => {
    const script = times(7, (i) => [{ tool: 'open_page', args: { url: `/docs/page-${i}` }, result: `page ${i}` }, declined]).flat();
    expect(runAgent(script).detections.filter((x) => x.toolName === 'charge_card')).toEqual([]);
  });

  it('is warned and stopped with one unrelated call inside the streak', () => {
    const run = runAgent([declined, { tool: 'open_page', args: { url: '/docs/billing' }, result: 'billing' }, declined, { tool: 'get_order', args: { order: 'o-17' }, error: { message: 'not found' } }, declined, declined, declined]);
    const d = run.detections.filter((x) => x.toolName === 'charge_card');
    expect(d.map((x) => [x.callIndex, x.level, x.rule])).toEqual([
      [5, 'warning', 'failing_recheck'],
      [7, 'critical', 'failing_recheck'],
    ]);
  });
});

describe('shell tools and empty answers', () => {
  const envelope = '<returncode>0</returncode>\n<output>\n</output>';
  it('different commands that each print nothing are not one answer to paraphrased arguments', () => {
    const script: Step[] = [
      ...times(6, (i) => ({ tool: 'bash', args: { command: `cat > fix_v${i}.patch << 'EOF'\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = ${i}\n+a = ${i + 1}\nEOF` }, result: envelope })),
      ...times(4, (i) => ({ tool: 'bash', args: { command: `sed -i 's/old${i}/new${i}/' src/mod${i}.py` }, result: envelope })),
      ...times(3, (i) => ({ tool: 'bash', args: { command: `python -c "print(${i})" > /tmp/out${i}` }, result: '' })),
    ];
    expect(rules(runAgent(script))).toEqual([]);
  });

  it('the same command printing nothing again and again is still a repeat', () => {
    const run = runAgent(times(6, () => ({ tool: 'bash', args: { command: 'grep -rn "resolve_lookup" /repo/pkg' }, result: envelope })));
    expect(run.first('critical')).toBe(5);
  });

  it('twelve flights checked in one parallel turn, each "available", are a fan-out, not a loop', () => {
    const turn = times(12, (i) => ({ tool: 'get_flight_status', args: { flight_number: `HAT${100 + i}`, date: '2026-05-15' }, result: 'available' }));
    const script: ScriptItem[] = [turn, times(4, (i) => ({ tool: 'get_flight_status', args: { flight_number: `HAT${200 + i}`, date: '2026-05-16' }, result: 'available' }))];
    expect(runAgent(script).detections).toEqual([]);
  });
});

describe('sub-agents are not one agent', () => {
  it('three sub-agents each handing over with the same command once is no repeat', () => {
    // each sub-agent's last call, one after the other as their spans end
    const script: Step[] = [
      { tool: 'open_file', agent: 'planner', args: { path: 'src/plan.md' }, result: 'the plan' },
      ...['planner', 'coder', 'reviewer', 'tester'].map((agent) => ({ tool: 'succeed', agent, args: {}, result: 'handed over' })),
    ];
    expect(rules(runAgent(script))).toEqual([]);
  });

  it('one agent repeating the command is still a repeat', () => {
    const run = runAgent(times(5, () => ({ tool: 'succeed', agent: 'coder', args: {}, result: 'handed over' })));
    expect(run.first('critical')).toBe(5);
  });

  it('a loop that moves between agents (A asks B, B asks A, the same way) is still caught', () => {
    const lap: Step[] = [
      { tool: 'ask_agent', agent: 'planner', args: { to: 'coder', question: 'which file holds the parser?' }, result: 'ask the planner' },
      { tool: 'ask_agent', agent: 'coder', args: { to: 'planner', question: 'which file holds the parser?' }, result: 'ask the coder' },
    ];
    const run = runAgent(times(5, () => lap).flat());
    expect(run.detections.find((d) => d.level === 'critical')).toMatchObject({ kind: 'cycle', callIndex: 8, cycleTools: ['ask_agent', 'ask_agent'] });
  });
});

describe('cycle messages', () => {
  it('say that repeated tool names differ by their arguments, without showing them', () => {
    const lap: Step[] = [
      { tool: 'open_page', args: { url: '/a' }, result: 'Page A: see /b' },
      { tool: 'open_page', args: { url: '/b' }, result: 'Page B: see /a' },
    ];
    const d = runAgent(times(4, () => lap).flat()).detections.find((x) => x.kind === 'cycle');
    expect(d?.message).toContain("'open_page' → 'open_page', the same tool with different arguments");
    expect(d?.message).not.toContain('/a');
  });
});

describe('a write resent back to back (tau2-leaderboard: transfer_to_human_agents three times)', () => {
  const transfer: Step = { tool: 'transfer_to_human_agents', args: { summary: 'User wants to change reservation XEWRD9 to a nonstop flight; not allowed by policy.' }, result: 'Transfer successful' };

  it('the same write, the same answer, three times in a row, is stopped at the 3rd', () => {
    const run = runAgent([transfer, transfer, transfer, transfer]);
    expect(rules(run)).toEqual(['3:back_to_back:critical']);
    expect(run.detections[0]?.message).toContain('3 times back to back');
  });

  it('a read repeated back to back keeps its hint first: warned at the 3rd, stopped at the 5th', () => {
    const search: Step = { tool: 'search_flights', args: { from: 'ATL', to: 'LAS' }, result: 'HAT001 08:00 nonstop' };
    expect(rules(runAgent(times(5, () => search)))).toEqual(['3:identical_calls:warning', '5:identical_calls:critical']);
  });

  it('the same additions in parallel with new removals each round (bfcl vector_prereq_33, honest) are not back to back', () => {
    const round = (r: number): Step[] => [
      ...times(3, (k) => ({ tool: 'core_memory_remove', args: { vec_id: r * 3 + k }, result: { status: `ID ${r * 3 + k} removed from store.` } })),
      ...times(3, (k) => ({ tool: 'core_memory_add', args: { text: `note ${k}` }, result: { id: 10 + r * 3 + k } })),
    ];
    const run = runAgent([round(0), round(1), round(2), round(3)]);
    expect(rules(run).filter((d) => d.includes('back_to_back') || d.includes('critical'))).toEqual([]);
  });

  it('a user message that says something new before a resend, or resends spaced out in time, are not back to back', () => {
    expect(rules(runAgent([transfer, transfer, { user: 'I said I do not want to be transferred.' }, transfer])).filter((d) => d.includes('back_to_back'))).toEqual([]);
    const spaced = { ...transfer, idleMs: 60_000 };
    expect(runAgent([spaced, spaced, spaced]).first('critical')).toBeUndefined();
  });
});

describe('a write that failed and then applied is new work (openhands-claude35 django-15563, openhands-claude35-2 django-13807)', () => {
  const rm: Step = { tool: 'execute_bash', args: { command: 'rm /workspace/repro.py' }, result: '[The command completed with exit code 0.]' };
  const create = (v: number, exists: boolean): Step =>
    exists
      ? { tool: 'str_replace_editor', args: { command: 'create', path: '/workspace/repro.py', file_text: `version ${v}` }, error: { message: 'Invalid `path` parameter: file already exists' } }
      : { tool: 'str_replace_editor', args: { command: 'create', path: '/workspace/repro.py', file_text: `version ${v}` }, result: 'File created successfully' };
  const run = (out: string): Step => ({ tool: 'execute_bash', args: { command: 'python /workspace/repro.py' }, error: { message: out } });

  it('rm, then the refused create applied, run, next version refused: each lap writes a new script, quiet', () => {
    const script = times(4, (v) => [rm, create(v, false), run(`Traceback ${v}`), create(v + 1, true)]).flat();
    expect(rules(runAgent([create(0, true), ...script])).filter((d) => d.includes('recheck'))).toEqual([]);
  });

  // The first rm after the create that applied weighs nothing (a repetition after a new write
  // verifies it, session 7); from then on nothing is done between and the rm is warned at its 4th.
  it('rm, then the same create that already applied, run: the same rm with nothing done between is warned', () => {
    const script = times(4, (v) => [rm, create(0, false), run(`Traceback ${v}`)]).flat();
    expect(rules(runAgent(script)).filter((d) => d.includes('execute_bash') || d.includes('recheck'))).toContain('10:recheck:warning');
  });
});
