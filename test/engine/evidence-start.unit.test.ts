import { describe, expect, it } from 'vitest';
import { runAgent, times, type ScriptItem } from '../support/agent-run.js';

/**
 * Where each detection's evidence begins (`evidenceStartTime`, `evidenceCalls`): the cost of a
 * loop is measured from the end of its first call, so every rule must report it.
 */
describe('evidence start of a detection', () => {
  const search = { tool: 'search', args: { q: 'order A-1234' }, result: { hits: [] as string[] } };

  it('identical calls 1..5: the warning at 3 and the stop at 5 both begin after call 1', () => {
    const run = runAgent(times(5, search));
    const [warning, critical] = run.detections;
    expect(warning).toMatchObject({ level: 'warning', callIndex: 3, evidenceCalls: 3, evidenceStartTime: run.endOf(1) });
    expect(critical).toMatchObject({ level: 'critical', callIndex: 5, evidenceCalls: 5, evidenceStartTime: run.endOf(1) });
  });

  it('a loop that starts after honest work begins at its own first call', () => {
    const run = runAgent([
      { tool: 'get_user', args: { id: 7 }, result: { name: 'Ada' } },
      { tool: 'get_orders', args: { user: 7 }, result: { orders: ['A-1'] } },
      ...times(3, search),
    ]);
    expect(run.detections[0]).toMatchObject({ callIndex: 5, count: 3, evidenceCalls: 3, evidenceStartTime: run.endOf(3) });
  });

  it('an unrelated call inside the loop is part of its evidence span', () => {
    const run = runAgent([search, search, { tool: 'get_weather', args: { city: 'Oslo' }, result: { c: 3 } }, search]);
    expect(run.detections[0]).toMatchObject({ callIndex: 4, count: 3, evidenceCalls: 4, evidenceStartTime: run.endOf(1) });
  });

  it('a cycle begins at the first step of its run, not at the first lap the tracker still stores', () => {
    const lap: ScriptItem[] = [
      { tool: 'read_file', args: { path: 'a.ts' }, result: 'export const a = 1;' },
      { tool: 'edit_file', args: { path: 'a.ts', old: 'b', new: 'c' }, error: { message: "old_string 'b' not found" } },
    ];
    const run = runAgent([{ tool: 'list_dir', args: { path: '.' }, result: ['a.ts'] }, ...lap, ...lap, ...lap, ...lap], { cycle: { maxPeriod: 2 } });
    const cycles = run.detections.filter((d) => d.kind === 'cycle');
    expect(cycles.map((d) => d.callIndex)).toEqual([7, 9]);
    for (const d of cycles) expect(d).toMatchObject({ evidenceStartTime: run.endOf(2), evidenceCalls: d.callIndex - 1 });
  });

  it('repeated failures begin at the first failure', () => {
    const fail = { tool: 'pay', args: { amount: 12 }, error: { type: 'PaymentDeclined', message: 'declined' } };
    const run = runAgent([{ tool: 'cart', args: {}, result: { total: 12 } }, ...times(3, fail)]);
    expect(run.detections[0]).toMatchObject({ kind: 'error_pattern', callIndex: 4, evidenceCalls: 3, evidenceStartTime: run.endOf(2) });
  });

  it('parallel duplicates count as one step, and the evidence starts at the oldest step', () => {
    const run = runAgent([[search, search], [search, search], [search, search]]);
    const d = run.detections[0];
    expect(d).toMatchObject({ level: 'warning', count: 3 });
    // the first step's two calls end 1 ms apart; the evidence starts at the first of them to end
    expect(d?.evidenceStartTime).toBe(run.endOf(1));
    expect(d?.evidenceCalls).toBe(d === undefined ? 0 : d.callIndex);
  });
});
