/** Compares Prometheus results with expectations, returning readable problems (empty when they match). */
import type { BoundsExpectation, Expectation, GroupsExpectation, RecordedExpectation } from './expectations.js';
import type { Sample, Series } from './prom-api.js';
import { groupKey } from './truth.js';

/** Relative tolerance for float division; counts themselves must match exactly. */
const EPSILON = 1e-9;

const close = (actual: number, expected: number): boolean =>
  Number.isNaN(expected) ? Number.isNaN(actual) : actual === expected || Math.abs(actual - expected) <= EPSILON * Math.max(1, Math.abs(expected));

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v.toPrecision(6));

/** Samples by group; two samples in one group mean the query did not aggregate as expected. */
export function byGroup(samples: readonly Sample[], by: readonly string[], problems: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    const key = groupKey(s.metric, by);
    if (out.has(key)) problems.push(`two series for group [${key}]: ${JSON.stringify(s.metric)}`);
    out.set(key, s.value);
  }
  return out;
}

/** Same group keys on both sides; otherwise one problem naming both lists. */
function sameGroups(by: readonly string[], wanted: Iterable<string>, actual: Iterable<string>, problems: string[], what = 'groups'): boolean {
  const want = [...wanted].sort();
  const got = [...actual].sort();
  if (JSON.stringify(want) === JSON.stringify(got)) return true;
  problems.push(`${what} by (${by.join(', ')}): want [${want.join('; ')}], got [${got.join('; ')}]`);
  return false;
}

function compareGroups(e: GroupsExpectation, actual: ReadonlyMap<string, number>, problems: string[]): void {
  if (!sameGroups(e.by, e.values.keys(), actual.keys(), problems)) return;
  for (const [key, value] of e.values) {
    const a = actual.get(key) ?? Number.NaN;
    if (!close(a, value)) problems.push(`[${key}]: want ${fmt(value)}, got ${fmt(a)}`);
  }
}

function compareBounds(e: BoundsExpectation, actual: ReadonlyMap<string, number>, problems: string[]): void {
  if (!sameGroups(e.by, e.bounds.keys(), actual.keys(), problems)) return;
  for (const [key, [min, max]] of e.bounds) {
    const a = actual.get(key) ?? Number.NaN;
    if (!(a >= min && a <= max)) problems.push(`[${key}]: want a time in [${new Date(min).toISOString()}, ${new Date(max).toISOString()}], got ${Number.isNaN(a) ? 'NaN' : new Date(a).toISOString()}`);
  }
}

/**
 * A recording-rule panel: the expected groups on both sides (the panel's and the reference's),
 * and the panel's value equal to the reference's (`reference`: its samples, evaluated at the
 * rule's evaluation time).
 */
function compareRecorded(e: RecordedExpectation, actual: ReadonlyMap<string, number>, reference: ReadonlyMap<string, number>, problems: string[]): void {
  if (!sameGroups(e.by, e.groups, reference.keys(), problems, 'reference groups')) return;
  if (!sameGroups(e.by, e.groups, actual.keys(), problems)) return;
  for (const [key, value] of reference) {
    const a = actual.get(key) ?? Number.NaN;
    if (!close(a, value)) problems.push(`[${key}]: want ${fmt(value)} (the rule's definition at its evaluation time), got ${fmt(a)}`);
  }
}

/** An instant query's result against its expectation (`reference`: the samples of a recorded expectation's reference query). */
export function compareInstant(e: Expectation, samples: readonly Sample[], reference: readonly Sample[] = []): string[] {
  const problems: string[] = [];
  const actual = byGroup(samples, e.by, problems);
  if (e.kind === 'groups') compareGroups(e, actual, problems);
  else if (e.kind === 'bounds') compareBounds(e, actual, problems);
  else compareRecorded(e, actual, byGroup(reference, e.by, problems), problems);
  return problems;
}

/**
 * A graph's range query, stepped by its own rate window over the scenario's range: the series are
 * the expected groups, no value is negative, and a per-minute graph's steps add up to the
 * increments (each step covers the window since the previous one, so nothing is lost or counted twice).
 */
export function compareRange(e: Expectation, series: readonly Series[], stepSeconds: number): string[] {
  const problems: string[] = [];
  const sums = new Map<string, number>();
  for (const s of series) {
    const key = groupKey(s.metric, e.by);
    if (sums.has(key)) problems.push(`two series for group [${key}]`);
    let sum = 0;
    for (const [t, v] of s.values) {
      if (v < 0) problems.push(`[${key}] negative at ${t}: ${v}`);
      if (Number.isFinite(v)) sum += v;
    }
    sums.set(key, sum);
  }
  sameGroups(e.by, e.kind === 'groups' ? e.values.keys() : e.kind === 'bounds' ? e.bounds.keys() : e.groups, sums.keys(), problems, 'series');
  if (e.kind === 'groups' && e.increments) {
    for (const [key, n] of e.increments) {
      const total = ((sums.get(key) ?? Number.NaN) * stepSeconds) / 60;
      if (!close(total, n)) problems.push(`[${key}]: steps add up to ${fmt(total)} increments, want ${n}`);
    }
  }
  return problems;
}
