import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runToOtlp } from '../../scripts/corpus/otlp.js';
import { RunPseudonymizer } from '../../scripts/corpus/pseudonymize.js';
import { pseudonymizeRun } from '../../scripts/corpus/pseudonymize-run.js';
import type { CorpusRun } from '../../scripts/corpus/run.js';
import { decodeTracesData } from '../../src/formats/otlp-json.js';
import { classifyError } from '../../src/detector/error-class.js';
import { fingerprint, volatileKeySet } from '../../src/fingerprint/canonical.js';
import { DEFAULT_VOLATILE_ARGUMENT_KEYS, DEFAULT_VOLATILE_RESULT_KEYS, isStatusWord } from '../../src/fingerprint/volatile.js';

const key = Buffer.alloc(32, 7);
const T0 = Date.parse('2025-05-11T10:00:00Z');
const pseudonymizer = (runId = 'run-1'): RunPseudonymizer => new RunPseudonymizer({ key, runId, from: T0, to: T0 + 3_600_000 });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('pseudonyms', () => {
  it('one value, one pseudonym within a run; unrelated pseudonyms in another run', () => {
    const p = pseudonymizer();
    const a = p.text('Reservation for Daiki Muller');
    expect(p.text('Reservation for Daiki Muller')).toBe(a);
    expect(p.text('reservation for daiki muller')).toBe(a.toLowerCase());
    expect(a).not.toBe('Reservation for Daiki Muller');
    expect(pseudonymizer('run-2').text('Reservation for Daiki Muller')).not.toBe(a);
  });

  it('two different values never share a pseudonym', () => {
    const p = pseudonymizer();
    const words = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}q`);
    expect(new Set(words.map((w) => p.text(w))).size).toBe(words.length);
    // two-letter words: a small space, still one pseudonym each
    const short = ['ab', 'cd', 'ef', 'gh', 'ij', 'kl', 'mn', 'pq', 'rs', 'tv', 'wx', 'yz'];
    expect(new Set(short.map((w) => p.text(w))).size).toBe(short.length);
  });

  it('no pseudonym is a word the run keeps as it is: a markup tag name stays the word of its tag alone', () => {
    // an OpenHands run quoting `<th>` and naming `.md` files: `md` drawn as `th` made two words one
    const tags = new Set(['th', 'tr', 'td', 'ul', 'li', 'em', 'dl', 'dt', 'tt', 'kbd', 'pre', 'html']);
    const p = new RunPseudonymizer({ key, runId: 'run-1', from: T0, to: T0 + 3_600_000, markupNames: tags });
    const letters = 'ghijklmnopqrstuvwxyz';
    const words = [...letters].flatMap((a) => [...letters].map((b) => `${a}${b}`)).filter((w) => !tags.has(w)).slice(0, 300);
    const pseudonyms = words.map((w) => p.text(w).toLowerCase());
    expect(pseudonyms.filter((w) => tags.has(w))).toEqual([]);
    expect(p.text('th <th>')).toBe('th <th>');
  });

  it('words of the two kinds never share one: all-hex words and short words with other letters', () => {
    // with this run's key stream two pairs met, before broad words were kept off all-hex pseudonyms
    const p = pseudonymizer('r');
    const hex = [...'abcdef'].flatMap((a) => [...'abcdef'].flatMap((b) => [...'abcdef'].map((c) => `${a}${b}${c}e`)));
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const other = [...letters].flatMap((a) => [...letters].flatMap((b) => [...'abcdefg'].map((c) => `q${a}${b}${c}`)));
    const words = [...hex, ...other];
    expect(new Set(words.map((w) => p.text(w))).size).toBe(words.length);
  });

  it('a year stays, alone as in a date; no other number becomes one', () => {
    const p = pseudonymizer();
    expect(p.text('in 2026, on 2026-03-15')).toBe('in 2026, on 2026-03-15'.replace('in', p.text('in')).replace('on', p.text('on')));
    const out = Array.from({ length: 300 }, (_, i) => p.text(String(1000 + i * 29)));
    expect(out.filter((n, i) => /^(19|20)\d\d$/.test(n) && n !== String(1000 + i * 29))).toEqual([]);
  });

  it('a number is never pseudonymized into an epoch of the run, which is kept as it is', () => {
    // a run whose window covers half of the ten-digit numbers that start with 1
    const p = new RunPseudonymizer({ key, runId: 'run-1', from: 1_000_000_000_000, to: 1_500_000_000_000 });
    const numbers = Array.from({ length: 60 }, (_, i) => String(1_600_000_000 + i * 7919));
    for (const n of numbers) {
      const out = Number(p.text(n));
      expect(out >= 1_000_000_000 - 86_400 && out <= 1_500_000_000 + 86_400).toBe(false);
    }
    expect(p.text('1200000000')).toBe('1200000000');
  });

  it('keeps the shape: length, case, digits, hex ids, uuids, paths, punctuation', () => {
    const p = pseudonymizer();
    const uuid = '3f2a9c1e-7b4d-4e8a-9f0c-1d2e3f4a5b6c';
    expect(p.text(uuid)).toMatch(UUID);
    const sha = 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3';
    expect(p.text(sha)).toMatch(/^[0-9a-f]{40}$/);
    const text = 'File /testbed/django/db/models.py, line 1234: KeyError(\'Main Street\')';
    const out = p.text(text);
    expect(out).toHaveLength(text.length);
    expect(out.replace(/[A-Za-z]/g, 'a').replace(/\d/g, '0')).toBe(text.replace(/[A-Za-z]/g, 'a').replace(/\d/g, '0'));
    expect(out).toMatch(/^[A-Z][a-z]{3} \/[a-z]+\/[a-z]+\/[a-z]+\/[a-z]+\.[a-z]{2}, [a-z]{4} \d{4}: [A-Z][a-z]{2}[A-Z][a-z]{4}\('[A-Z][a-z]{3} [A-Z][a-z]{5}'\)$/);
    expect(out).not.toMatch(/testbed|django|models|Main|Street/);
  });

  it('keeps what detection reads: timestamps, durations, small numbers, status and error words, envelopes, emptiness', () => {
    const p = pseudonymizer();
    for (const kept of ['2025-05-11T10:02:03Z', '2024-05-17', '13:00:00', '120ms', '2.5 seconds', 'OK', 'done', 'available', 'Error: tool not found', '', '  ', 'no-op']) {
      expect(p.text(kept)).toBe(kept);
    }
    expect(p.text('<returncode>0</returncode>\n<output>\n</output>')).toBe('<returncode>0</returncode>\n<output>\n</output>');
    // an acknowledgement stays one (its words are the fingerprint's), so it stays uninformative
    expect(p.text('<returncode>0</returncode>\n<output>\n0\nExit code: 0\n</output>')).toBe('<returncode>0</returncode>\n<output>\n0\nExit code: 0\n</output>');
    expect(p.text('<returncode>1</returncode>\n<output>\nsecretword\n</output>')).toMatch(/^<returncode>1<\/returncode>\n<output>\n[a-z]{10}\n<\/output>$/);
    expect(p.text('3 failed, 7 passed')).toBe('3 failed, 7 passed'.replace('passed', p.text('passed')));
    // an epoch within a day of the run is a time; another 10-digit number keeps its epoch shape
    expect(p.text(String(Math.floor(T0 / 1000)))).toBe(String(Math.floor(T0 / 1000)));
    expect(p.text('1234567890')).toMatch(/^1\d{9}$/);
    expect(p.text('9876543210')).toMatch(/^[2-9]\d{9}$/);
  });

  it('rewrites JSON text as JSON of the same structure; schema member names stay, data used as names does not', () => {
    const p = pseudonymizer();
    const doc = { user_id: 'raj_santos_9079', payment_methods: { credit_card_4421486: { source: 'credit_card' } }, 'Action Camera': '3377618313', request_id: 'req_8f2kx9', count: 12, ok: true };
    const out = JSON.parse(p.text(JSON.stringify(doc))) as Record<string, unknown>;
    const keys = Object.keys(out);
    expect(keys.filter((k) => ['user_id', 'payment_methods', 'request_id', 'count', 'ok'].includes(k))).toHaveLength(5);
    const data = keys.filter((k) => !['user_id', 'payment_methods', 'request_id', 'count', 'ok'].includes(k));
    expect(data).toHaveLength(1);
    expect(data[0]).toMatch(/^[A-Z][a-z]{5} [A-Z][a-z]{5}$/);
    expect(out.request_id).toMatch(/^[a-z]{3}_\d[a-z]\d[a-z]{2}\d$/);
    expect(out.request_id).not.toBe('req_8f2kx9');
    expect(out.count).toBe(12);
    expect(out.ok).toBe(true);
    expect(out.user_id).toMatch(/^[a-z]{3}_[a-z]{6}_\d{4}$/);
    expect(Object.keys(out.payment_methods as object)[0]).toMatch(/^[a-z]{6}_[a-z]{4}_\d{7}$/);
    expect(JSON.stringify(out)).not.toContain('Action');
    expect(JSON.stringify(out)).not.toContain('4421486');
  });

  it('keeps the program word of each shell command segment', () => {
    const p = pseudonymizer();
    const out = p.value({ command: 'cd /testbed && grep -rn "secret_thing" src | head -20' }) as { command: string };
    expect(out.command).toMatch(/^cd \/\w+ && grep -\w+ "\w+_\w+" \w+ \| head -20$/);
    expect(out.command).not.toContain('secret');
    expect(out.command).not.toContain('testbed');
  });

  it('keeps no word of a here-document or script body: only the first line holds programs', () => {
    const p = pseudonymizer();
    const out = p.shell("cat > /tmp/fix.py << 'EOF'\nimport zanzibar\nzanzibar.setup()\nclass Quokka: pass\nEOF\npython /tmp/fix.py");
    const lines = out.split('\n');
    const marker = /^cat > \/\w+\/\w+\.\w+ << '([A-Z]{3})'$/.exec(lines[0] ?? '')?.[1];
    expect(marker).toBeDefined();
    expect(lines[4]).toBe(marker); // the here-document still ends where it did
    expect(out).not.toMatch(/zanzibar|quokka|import|python|setup/i);
    // a call inside quotes is not a program either
    expect(p.shell('python -c "x = 1; zanzibar.run()"')).not.toContain('zanzibar');
  });
});

describe('no original text survives', () => {
  const SECRET = 'Zanzibar Quokka';
  const run: CorpusRun = {
    id: 'planted',
    source: 'test',
    agent: 'agent',
    model: 'model',
    outcome: 'submitted',
    recordedTimes: true,
    turns: [
      { kind: 'user', start: T0, end: T0 + 1000, calls: [], text: `my name is ${SECRET}` },
      {
        kind: 'model',
        start: T0 + 1000,
        end: T0 + 2000,
        text: `I will look up ${SECRET}`,
        usage: { input: 100, output: 20 },
        calls: [
          { name: 'find_user', arguments: { name: SECRET, note: `${SECRET} lives at 12 Quokka Lane` }, result: JSON.stringify({ found: [SECRET], id: 'zanzibar_quokka_4421' }), id: 'call_zanzibar', start: T0 + 2001, end: T0 + 2010 },
          { name: 'bash', arguments: { command: `echo ${SECRET} > /tmp/zanzibar.txt` }, error: `Permission denied: /tmp/zanzibar.txt (${SECRET})`, start: T0 + 2001, end: T0 + 2012 },
          { name: 'raw_args', arguments: `quokka=${SECRET}`, result: `hello ${SECRET.toUpperCase()}`, start: T0 + 2001, end: T0 + 2015 },
        ],
      },
    ],
  };

  it('not a word of a planted secret is left in the OTLP written for the corpus', () => {
    const otlp = JSON.stringify(runToOtlp(pseudonymizeRun(run, key))).toLowerCase();
    for (const word of ['zanzibar', 'quokka', 'lives', 'lane', 'hello']) expect(otlp).not.toContain(word);
    // the structure is all there: three tool calls, the error, the user message, the usage
    expect(otlp.match(/"execute_tool /g)).toHaveLength(3);
    expect(otlp).toContain('permission denied');
    expect(otlp).toContain('gen_ai.user.message');
    expect(otlp).toContain('gen_ai.usage.input_tokens');
  });

  it('the originals, unpseudonymized, do hold it (the check above can fail)', () => {
    expect(JSON.stringify(runToOtlp(run)).toLowerCase()).toContain('zanzibar');
  });
});

describe('words in letters other than a-z', () => {
  it('are pseudonymized, not kept as status words (which are read through a-z and digits only)', () => {
    const p = pseudonymizer();
    const text = '请查找所有与"计算机系统基础"课程相关的文件';
    const out = p.text(text);
    for (const word of ['请查找所有与', '计算机系统基础', '课程相关的文件']) expect(out).not.toContain(word);
    expect([...out].length).toBe([...text].length);
    // one word, one pseudonym; a text made only of such words is rewritten too
    expect(p.text('计算机系统基础')).toBe(out.slice(7, 14));
    expect(p.text('好的')).not.toBe('好的');
    // a Han character is a word of its own, and in an id's letters too
    expect(p.text('的')).not.toBe('的');
    expect(p.text('2024历年')).toMatch(/^2024[^历年]{2}$/);
    // ASCII status words and single letters are still kept
    expect(p.text('OK')).toBe('OK');
    expect(p.text('x12 a')).toBe('x12 a');
  });

  it('read as generic before and after, as detection reads them (no a-z letter or digit in them)', () => {
    const p = pseudonymizer();
    for (const w of ['完成', '计算机系统基础', 'Überprüfung']) {
      expect(isStatusWord(p.text(w)), w).toBe(isStatusWord(w));
    }
  });
});

describe('user messages', () => {
  const ASK = 'Could you check flight HAT156 again, please?';
  const turn = (kind: 'user' | 'model', at: number, text: string): CorpusRun['turns'][number] => ({ kind, start: T0 + at, end: T0 + at + 500, text, calls: [] });
  const run: CorpusRun = {
    id: 'users',
    source: 'test',
    agent: 'agent',
    model: 'model',
    outcome: 'user_stop',
    recordedTimes: true,
    turns: [
      turn('user', 0, ASK),
      turn('model', 1000, 'Checking HAT156 now.'),
      turn('user', 2000, ASK),
      turn('model', 3000, 'Checking HAT156 again.'),
      turn('user', 4000, 'Could you check flight HAT157 again, please?'),
      turn('user', 4600, 'could you check flight HAT156 again, please?'),
      turn('model', 5000, 'Both.'),
    ],
  };
  const users = (r: CorpusRun): Array<string | undefined> => r.turns.filter((t) => t.kind === 'user').map((t) => t.text);

  it('are pseudonymized with the run map: equal messages stay equal, different ones differ, the model says nothing', () => {
    const out = pseudonymizeRun(run, key);
    const [first, again, other, lower] = users(out);
    expect(first).not.toBe(ASK);
    expect(first).toHaveLength(ASK.length);
    expect(first).not.toMatch(/check|flight|HAT|please/i);
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    expect(lower).not.toBe(first);
    expect(lower?.toLowerCase()).toBe(first?.toLowerCase());
    expect(out.turns.filter((t) => t.kind === 'model').map((t) => t.text)).toEqual([undefined, undefined, undefined]);
    // a different run draws other pseudonyms for the same message
    expect(users(pseudonymizeRun({ ...run, id: 'users-2' }, key))[0]).not.toBe(first);
  });

  it('keep a markup tag name as one word: kept in its tag, kept in every other text of the run', () => {
    // a context summary quoting a page's `<html>` and a call to `fetch_html`: one word on both sides
    const tagged: CorpusRun = {
      ...run,
      id: 'users-tags',
      turns: [
        turn('user', 0, 'The page starts <html lang="en"> and the HTML holds a <script> tag; try the script again'),
        { kind: 'model', start: 1000, end: 2000, calls: [{ name: 'fetch_html', arguments: { url: 'https://x.org/a.html' }, result: '<html><body>Plain words</body></html>', start: 2001, end: 2500 }] },
      ],
    };
    const out = pseudonymizeRun(tagged, key);
    const words = (out.turns[0]?.text ?? '').split(/[^A-Za-z]+/);
    expect(words.filter((w) => /^(html|script)$/i.test(w))).toEqual(['html', 'HTML', 'script', 'script']);
    // (`The` is an acknowledgement word, kept: see 'keeps what detection reads')
    expect(words.filter((w) => /^(page|starts|lang|holds|tag|try|again)$/.test(w))).toEqual([]);
    const [call] = out.turns[1]?.calls ?? [];
    expect(call?.arguments).toMatchObject({ url: expect.stringMatching(/^[a-z]{5}:\/\/[a-z]\.[a-z]{3}\/[a-z]\.html$/) });
    expect(call?.result).toMatch(/^<html><body>[A-Z][a-z]{4} [a-z]{5}<\/body><\/html>$/);
    // a word that is no tag name in the run is pseudonymized as before
    expect(pseudonymizeRun({ ...tagged, turns: [turn('user', 0, 'the script and the html')] }, key).turns[0]?.text).not.toMatch(/script|html/);
  });

  it('reach the OTLP as gen_ai.input.messages on the chat span after them, pseudonymized', () => {
    const doc = runToOtlp(pseudonymizeRun(run, key));
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/flight|HAT15/);
    const chats = decodeTracesData(doc).filter((s) => s.name.startsWith('chat'));
    const inputs = chats.map((s) => JSON.parse(String(s.attributes['gen_ai.input.messages'])) as Array<{ role: string; parts: Array<{ content: string }> }>);
    expect(inputs.map((m) => m.map((x) => x.role))).toEqual([['user'], ['user'], ['user', 'user']]);
    const [first, again, other, lower] = inputs.flat().map((x) => x.parts[0]?.content);
    expect(first).toBe(users(pseudonymizeRun(run, key))[0]);
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    expect(lower).not.toBe(first);
    expect(lower?.toLowerCase()).toBe(first?.toLowerCase());
  });
});

describe('detection sees on pseudonyms what it sees on originals', () => {
  const TOKENS = [
    'ok', 'OK.', 'done', 'error', 'Error:', 'not found', 'No results found', 'available', 'landed', 'unknown tool', 'Usuario',
    'RF12345', 'RF12346', "'quoted text'", 'retry after 3s', '/tmp/x.txt',
    'alpha', 'beta', 'Gamma', 'flight', 'HAT156', 'raj_santos_9079', '#W4680753', '42', '1234', '98157', '3377618313',
    '2024-05-17', '2026-11-21T10:00:00Z', '13:00:00', '120ms', 'pid 4242', '1717171717',
    '3f2a9c1e-7b4d-4e8a-9f0c-1d2e3f4a5b6c', '3f2a9c1e-beef-4e8a-9f0c-1d2e3f4a5b6c', 'a94a8fe5ccb19ba61c4c0873d391e987', 'msg_01HXABCDEFGH12',
    'deadbeef', 'bead', 'cafe', 'ab12', 'x9',
    ' ', '  ', '\n', '\t', ', ', '"', '/', '<output>', '</output>', '<returncode>0</returncode>',
    // acknowledgements: a shell's own exit line, a write's confirmation (tbench-mini-claude4 had one turn informative)
    'Exit code: 0', 'File written', 'Command finished',
  ];
  const text = fc.array(fc.constantFrom(...TOKENS), { maxLength: 8 }).map((t) => t.join(''));
  const json = fc.dictionary(fc.constantFrom('id', 'name', 'status', 'request_id', 'user_id', 'ts', 'items'), fc.oneof(text, fc.integer({ min: 0, max: 99999 })), { maxKeys: 4 }).map((o) => JSON.stringify(o));
  const value = fc.oneof(text, json);
  const resultKeys = volatileKeySet(DEFAULT_VOLATILE_RESULT_KEYS);
  const argumentKeys = volatileKeySet(DEFAULT_VOLATILE_ARGUMENT_KEYS);

  it('equal fingerprints and error classes stay equal, different ones stay different, informative stays informative', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 2, maxLength: 6 }), (values) => {
        const p = pseudonymizer();
        const pseudo = values.map((v) => p.text(v));
        // failures: the error class (normalized message) and the unknown-tool flag
        const eo = values.map((v) => classifyError({ message: v }));
        const ep = pseudo.map((v) => classifyError({ message: v }));
        for (let i = 0; i < values.length; i++) {
          expect(ep[i]?.unknownTool).toBe(eo[i]?.unknownTool);
          for (let j = 0; j < i; j++) expect(ep[i]?.errorClass === ep[j]?.errorClass).toBe(eo[i]?.errorClass === eo[j]?.errorClass);
        }
        for (const [side, keys] of [['result', resultKeys], ['arguments', argumentKeys]] as const) {
          const fo = values.map((v) => fingerprint(v, { side, volatileKeys: keys, now: T0 }));
          const fp = pseudo.map((v) => fingerprint(v, { side, volatileKeys: keys, now: T0 }));
          for (let i = 0; i < values.length; i++) {
            expect(fp[i]?.informative === 0).toBe(fo[i]?.informative === 0);
            for (let j = 0; j < i; j++) expect(fp[i]?.hash === fp[j]?.hash).toBe(fo[i]?.hash === fo[j]?.hash);
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});
