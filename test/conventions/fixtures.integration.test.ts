import { describe, expect, it } from 'vitest';
import { customAdapter, defaultAdapters } from '../../src/index.js';
import { findToolAdapter, readAgentName, readPromptName } from '../../src/conventions/index.js';
import type { SpanView } from '../../src/conventions/types.js';
import { loadFixtures, replay, type SpanFixture } from './replay.js';

const acme = customAdapter({
  name: 'acme',
  toolSpan: { attribute: 'acme.kind', equals: 'tool' },
  toolName: 'acme.tool',
  arguments: 'acme.args',
  result: 'acme.result',
  promptName: 'acme.prompt',
});
const conventionsFor = (name: string) => (name === 'custom-inhouse' ? [acme, ...defaultAdapters] : defaultAdapters);

/** The tool span as it looks when it ends (what onEnding sees). */
function endView(f: SpanFixture, failing = false): SpanView {
  const failure = failing ? f.failure : undefined;
  return {
    name: f.tool.renameAtEnd ?? f.tool.renameAtStart ?? f.tool.name,
    attributes: { ...f.tool.start, ...f.tool.end, ...(failure?.end ?? {}) },
    ...(failure?.status ? { status: failure.status } : {}),
    ...(failure?.exception ? { events: [{ name: 'exception', attributes: failure.exception }] } : {}),
  };
}

const fixtures = loadFixtures();

describe('span fixtures: each instrumentation dialect', () => {
  it('covers every dialect the README lists', () => {
    expect(new Set(fixtures.map(([, f]) => f.expect.adapter))).toEqual(
      new Set(['gen_ai', 'ai-sdk', 'openinference', 'traceloop', 'langfuse', 'langsmith', 'mastra', 'acme']),
    );
  });

  describe.each(fixtures)('%s', (name, f) => {
    const conventions = conventionsFor(name);

    it('is claimed by its adapter and read completely', () => {
      const view = endView(f);
      const adapter = findToolAdapter(conventions, view);
      expect(adapter?.name).toBe(f.expect.adapter);
      const fields = adapter?.readToolCall(view);
      expect(fields?.toolName).toBe(f.expect.toolName);
      expect(fields?.arguments !== undefined).toBe(f.expect.arguments);
      expect(fields?.result !== undefined).toBe(f.expect.result);
      expect(fields?.error).toBeUndefined();
      const startView: SpanView = { name: f.tool.renameAtStart ?? f.tool.name, attributes: f.tool.start };
      // the Mastra bridge gives nothing away before the span ends
      expect(findToolAdapter(conventions, startView) === undefined).toBe(f.expect.endOnly === true);
      const parentView: SpanView = { name: f.parent.name, attributes: f.parent.attributes };
      if (f.expect.agentName !== undefined) expect(readAgentName(conventions, parentView) ?? readAgentName(conventions, view)).toBe(f.expect.agentName);
    });

    it('a loop of this span is warned on the 3rd call and stopped on the 5th, whatever the dialect', () => {
      const run = replay(f, 10, { conventions });
      expect(run.detections.map((d) => [d.kind, d.level, d.callIndex, d.toolName])).toEqual([
        ['repeat', 'warning', 3, f.expect.toolName],
        ['repeat', 'critical', 5, f.expect.toolName],
      ]);
      expect(run.aborted).toBe(true);
      expect(run.toolSpans).toHaveLength(5);
      for (const d of run.detections) {
        expect(d.promptName).toBe(f.expect.promptName);
        if (f.expect.agentName !== undefined) expect(d.agentName).toBe(f.expect.agentName);
        expect(d.evidence).toBe('arguments+result');
      }
      // the collector counts every dialect by the gen_ai keys: written where missing, never overwritten
      for (const s of run.toolSpans) {
        expect(s.attributes['gen_ai.operation.name']).toBe('execute_tool');
        expect(s.attributes['gen_ai.tool.name']).toBe(f.expect.toolName);
        if (f.expect.promptName !== undefined) expect(s.attributes['gen_ai.prompt.name']).toBe(f.expect.promptName);
      }
      const events = run.toolSpans.map((s) => s.events.filter((e) => e.name === 'loop.detected').length);
      expect(events).toEqual([0, 0, 1, 0, 1]);
      // no content of the call in any event
      const raw = JSON.stringify(run.toolSpans.flatMap((s) => s.events));
      const names = new Set([f.expect.promptName, f.expect.agentName, f.expect.toolName]);
      const content = Object.values({ ...f.tool.start, ...f.tool.end }).filter((v): v is string => typeof v === 'string' && v.length > 8 && !names.has(v));
      expect(content.length).toBeGreaterThan(0);
      for (const v of content) expect(raw).not.toContain(v);
    });

    // dialects without a failure shape or a template name register no test rather than a skipped one
    if (f.failure !== undefined) it('reads the failure the way this dialect records it', () => {
      const view = endView(f, true);
      const fields = findToolAdapter(conventions, view)?.readToolCall(view);
      expect(fields?.error).toBeDefined();
      // what a failing call printed is kept: part of what the failure said (its outcome)
      const recorded = findToolAdapter(conventions, endView(f))?.readToolCall(endView(f))?.result;
      expect(fields?.result).toEqual(recorded);
      if (f.expect.errorType !== undefined) expect(fields?.error?.type).toBe(f.expect.errorType);
      if (f.expect.errorMessage !== undefined) expect(fields?.error?.message).toBe(f.expect.errorMessage);
      const run = replay(f, 10, { failing: true, conventions });
      expect(run.detections.map((d) => [d.kind, d.level, d.callIndex])).toEqual([
        ['error_pattern', 'warning', 3],
        ['error_pattern', 'critical', 5],
      ]);
    });

    if (f.expect.promptName !== undefined) it('resolves the prompt template name where the dialect puts it', () => {
      const fromParent = readPromptName(conventions, { name: f.parent.name, attributes: f.parent.attributes });
      const fromTool = readPromptName(conventions, endView(f));
      expect(fromParent ?? fromTool).toBe(f.expect.promptName);
    });
  });
});
