import type { Evidence, RuleName } from './types.js';

/** Facts a message may use: names, counts and classes, never argument or result content. */
export interface MessageFacts {
  readonly rule: RuleName;
  readonly toolName: string;
  readonly count: number;
  readonly evidence: Evidence;
  readonly distinctArgs?: number;
  readonly errorLabel?: string;
  readonly cycleTools?: readonly string[];
}

const EVIDENCE_NOTE: Record<Evidence, string> = {
  'arguments+result': '',
  arguments: ' (results are not captured, so this rests on arguments only)',
  result: ' (arguments are not captured, so this rests on results only)',
  name: ' (arguments and results are not captured, so this rests on the tool name only)',
};

export function describeDetection(f: MessageFacts): string {
  const tool = `'${f.toolName}'`;
  const note = EVIDENCE_NOTE[f.evidence];
  switch (f.rule) {
    case 'identical_calls':
      if (f.evidence === 'arguments+result') {
        return `${tool} was called ${f.count} times with identical arguments and returned the same result each time`;
      }
      if (f.evidence === 'arguments') return `${tool} was called ${f.count} times with identical arguments${note}`;
      if (f.evidence === 'result') return `${tool} returned the same result ${f.count} times${note}`;
      return `${tool} was called ${f.count} times in a row${note}`;
    case 'changing_output':
      return `${tool} was called ${f.count} times with identical arguments; its output changed every time, but the agent never moved on`;
    case 'same_result':
      return `${tool} returned the same result to ${f.count} calls with ${f.distinctArgs ?? 2} different arguments: rephrasing is not getting anywhere`;
    case 'cycle': {
      const path = (f.cycleTools ?? []).map((t) => `'${t}'`).join(' → ');
      return `a cycle of ${f.cycleTools?.length ?? 0} steps (${path}) repeated ${f.count} times with the same results${note}`;
    }
    case 'repeated_failure':
      return `${tool} failed ${f.count} times with the same arguments`;
    case 'error_class':
      return `${tool} failed ${f.count} times with the same error${f.errorLabel ? ` (${f.errorLabel})` : ''}${
        f.distinctArgs && f.distinctArgs > 1 ? ` over ${f.distinctArgs} different arguments` : ''
      }`;
    case 'unknown_tool':
      return `the agent called ${tool}, a tool that does not exist, ${f.count} times`;
  }
}
