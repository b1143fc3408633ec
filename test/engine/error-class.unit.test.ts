import { describe, expect, it } from 'vitest';
import { classifyError, normalizeErrorMessage } from '../../src/detector/error-class.js';

describe('error classes', () => {
  it('use a specific error type and ignore the text', () => {
    const a = classifyError({ type: 'RateLimitError', message: 'retry in 3s' });
    const b = classifyError({ type: 'RateLimitError', message: 'quota exceeded for key sk-xyz' });
    expect(a.errorClass).toBe(b.errorClass);
    expect(a.errorLabel).toBe('RateLimitError');
    expect(classifyError({ type: 'TimeoutError' }).errorClass).not.toBe(a.errorClass);
  });

  it('fall back to the normalised message for generic types', () => {
    expect(classifyError({ type: 'Error', message: "File 'src/a.ts' not found (errno 2)" }).errorClass).toBe(
      classifyError({ type: '_OTHER', message: "File 'lib/b.ts' not found (errno 17)" }).errorClass,
    );
    expect(classifyError({ message: 'permission denied' }).errorClass).not.toBe(classifyError({ message: 'file not found' }).errorClass);
    expect(classifyError({ message: 'x' }).errorLabel).toBeUndefined();
    expect(normalizeErrorMessage('429 Too Many Requests, retry after 3.5s /v1/chat 7c9e6679-7425-40de-944b-e07fc1f90ae7')).toBe('# too many requests, retry after #s <path> <id>');
  });

  it('recognise calls to tools that do not exist', () => {
    for (const e of [
      { type: 'AI_NoSuchToolError', message: 'x' },
      { message: "Model tried to call unavailable tool 'browse'. Available tools: search." },
      { message: 'Unknown tool: browse' },
      { message: "Tool 'browse' not found" },
      { message: 'tool browse does not exist' },
    ]) {
      expect(classifyError(e).unknownTool, JSON.stringify(e)).toBe(true);
    }
    expect(classifyError({ message: 'File not found' }).unknownTool).toBe(false);
    expect(classifyError({ message: 'the tool failed: timeout' }).unknownTool).toBe(false);
  });
});
