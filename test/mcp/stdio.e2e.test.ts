/**
 * E2E of `loopwatch mcp` over stdio (issue 31): the official MCP TypeScript SDK client, through
 * the built CLI, to the official filesystem server from npm and to a server built with the SDK
 * (test/mcp/support/order-server.ts); JSON-RPC batches to a minimal server that still takes them
 * (test/mcp/support/batch-server.mjs). A tee between the proxy and the server records the bytes
 * the server got and sent, to compare with the bytes the client sent and got.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { joinParts, LineSplitter } from '../../src/mcp/framing.js';
import { BATCH_SERVER, CLI, connectThroughProxy, count, FILESYSTEM_SERVER, ORDER_SERVER, resultText, TEE, teeBytes, tempDir } from './support/proxy.js';

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.allSettled(closers.map((c) => c()));
});

describe('loopwatch mcp over stdio, with the official TypeScript SDK client', { timeout: 60_000 }, () => {
  it('an honest session with the filesystem server passes byte for byte, both ways (every message, ids, order)', async () => {
    const files = tempDir('files');
    writeFileSync(join(files, 'a.txt'), 'first file\n');
    const tee = tempDir('tee');
    const { client, transport } = await connectThroughProxy([], [TEE, tee, '--', process.execPath, FILESYSTEM_SERVER, files]);
    closers.push(() => client.close());
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('read_text_file');
    expect(resultText(await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'a.txt') } }))).toBe('first file\n');
    await client.callTool({ name: 'write_file', arguments: { path: join(files, 'b.txt'), content: 'second' } });
    expect(resultText(await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'b.txt') } }))).toBe('second');
    expect(resultText(await client.callTool({ name: 'list_directory', arguments: { path: files } }))).toContain('b.txt');
    // a missing file twice is not yet a loop
    for (let i = 0; i < 2; i++) expect(resultText(await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'nope.txt') } }))).toContain('ENOENT');
    await client.ping();
    await client.close();
    const exit = await transport.exit;
    expect(exit).toEqual({ code: 0, signal: null });
    const server = teeBytes(tee);
    expect(server.toServer.equals(transport.sentBytes())).toBe(true);
    expect(server.fromServer.equals(transport.receivedBytes())).toBe(true);
    expect(count(server.toServer, '"tools/call"')).toBe(6);
    expect(transport.stderr).not.toContain('malformed');
  });

  it('a looping session with the filesystem server: the hint at the threshold, then the refusal; the server sees only the calls that ran', async () => {
    const files = tempDir('files');
    const tee = tempDir('tee');
    const { client, transport } = await connectThroughProxy([], [TEE, tee, '--', process.execPath, FILESYSTEM_SERVER, files]);
    closers.push(() => client.close());
    const missing = { name: 'read_text_file', arguments: { path: join(files, 'config.yaml') } };
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await client.callTool(missing));
    // other work goes on after the refusal
    const listing = await client.callTool({ name: 'list_allowed_directories', arguments: {} });
    const again = await client.callTool(missing);
    await client.close();
    await transport.exit;

    const texts = results.map(resultText);
    console.log(`TypeScript client, looping session (filesystem server, read_text_file of a missing file):\n${texts.map((t, i) => `  call ${i + 1}: ${JSON.stringify(t)}`).join('\n')}`);
    expect(results.map((r) => r.isError)).toEqual([true, true, true, true]);
    expect(texts[0]).toContain('ENOENT');
    expect(texts[1]).toContain('ENOENT');
    expect(texts[2]).toMatch(/^\[loopwatch\] This call was not run: 'read_text_file' already failed twice with these exact arguments and the same error\. .*If you make this call again, it will be refused for the rest of this run\.$/);
    expect(texts[3]).toMatch(/^\[loopwatch\] This call was refused and not run: .*tell the user/);
    expect(resultText(again)).toBe(texts[3]);
    expect(listing.isError).toBeFalsy();
    // the server got the two calls that ran, and the listing: never the hinted or refused ones
    const server = teeBytes(tee);
    expect(count(server.toServer, '"read_text_file"')).toBe(2);
    expect(count(server.toServer, '"list_allowed_directories"')).toBe(1);
    // the proxy's own answers are the only bytes the server did not send
    expect(count(transport.receivedBytes(), '[loopwatch]')).toBe(3);
    expect(transport.stderr).toContain("hinted: error_pattern warning on 'read_text_file'");
    expect(transport.stderr).toContain("blocked: error_pattern critical on 'read_text_file'");
  });

  it('a server built with the SDK answering the same failure: enforce refuses, observe lets every call through and says what enforce would do', async () => {
    const call = { name: 'lookup_order', arguments: { order_id: 'A-1042' } };
    const enforce = await connectThroughProxy(['--mode', 'enforce'], ORDER_SERVER);
    closers.push(() => enforce.client.close());
    const enforced = [];
    for (let i = 0; i < 4; i++) enforced.push(resultText(await enforce.client.callTool(call)));
    await enforce.client.close();
    expect(enforced[0]).toContain('locked by another process');
    expect(enforced[1]).toBe(enforced[0]);
    expect(enforced[2]).toContain("[loopwatch] This call was not run: 'lookup_order' already failed twice");
    expect(enforced[3]).toContain('[loopwatch] This call was refused and not run');

    const observe = await connectThroughProxy(['--mode', 'observe'], ORDER_SERVER);
    closers.push(() => observe.client.close());
    const observed = [];
    for (let i = 0; i < 4; i++) observed.push(resultText(await observe.client.callTool(call)));
    await observe.client.close();
    expect(observed.every((t) => t.includes('locked by another process'))).toBe(true);
    expect(observe.transport.stderr).toContain("would be hinted in enforce mode: error_pattern warning on 'lookup_order'");
  });

  it("the server's exit code is the proxy's; a signal to the proxy reaches the server and its end is the proxy's", async () => {
    const exiting = await connectThroughProxy([], ORDER_SERVER);
    await exiting.client.callTool({ name: 'exit', arguments: { code: 3 } });
    expect(await exiting.transport.exit).toEqual({ code: 3, signal: null });

    const signalled = await connectThroughProxy([], ORDER_SERVER);
    closers.push(() => signalled.client.close());
    await signalled.client.listTools();
    signalled.transport.process?.kill('SIGTERM');
    // the server ends by SIGTERM: 128 + 15, as a shell reports it
    expect(await signalled.transport.exit).toEqual({ code: 143, signal: null });
  });

  it('malformed JSON-RPC from the client is relayed unchanged and reported once; the session goes on', async () => {
    const tee = tempDir('tee');
    const { client, transport } = await connectThroughProxy([], [TEE, tee, '--', process.execPath, ...ORDER_SERVER]);
    closers.push(() => client.close());
    await client.listTools();
    transport.writeRaw('this is not json\n');
    transport.writeRaw('{"jsonrpc":"2.0","method":"tools/call","id":77,\n');
    expect(resultText(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here');
    await client.close();
    await transport.exit;
    const server = teeBytes(tee);
    expect(server.toServer.equals(transport.sentBytes())).toBe(true);
    expect(server.toServer.includes('this is not json\n{"jsonrpc":"2.0","method":"tools/call","id":77,\n')).toBe(true);
    expect(transport.stderr.match(/malformed JSON-RPC from the client/g)).toHaveLength(1);
  });

  it("a client's cancellation of a call that runs reaches the server", async () => {
    const tee = tempDir('tee');
    const { client, transport } = await connectThroughProxy([], [TEE, tee, '--', process.execPath, ...ORDER_SERVER]);
    closers.push(() => client.close());
    const controller = new AbortController();
    const slow = client.callTool({ name: 'slow', arguments: { ms: 10_000 } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('user pressed stop'), 200);
    await expect(slow).rejects.toThrow();
    expect(resultText(await client.callTool({ name: 'echo', arguments: { text: 'after' } }))).toBe('after');
    await client.close();
    await transport.exit;
    expect(count(teeBytes(tee).toServer, '"notifications/cancelled"')).toBe(1);
  });

  it('a JSON-RPC batch: each tools/call in it is guarded like a single one; the server gets the rest of the batch, the client the answers by id', async () => {
    const tee = tempDir('tee');
    const proxy = spawn(process.execPath, [CLI, 'mcp', '--', process.execPath, TEE, tee, '--', process.execPath, BATCH_SERVER], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, OTEL_SDK_DISABLED: 'true' },
    });
    closers.push(async () => void proxy.kill());
    const received: unknown[] = [];
    let waiting: (() => void) | undefined;
    const lines = new LineSplitter();
    proxy.stdout.on('data', (chunk: Buffer) =>
      lines.push(chunk, (parts, bytes) => {
        received.push(JSON.parse(joinParts(parts, bytes).toString('utf8')));
        waiting?.();
      }),
    );
    /** Sends a line; resolves when `n` more messages came back. */
    const send = async (line: string, n: number): Promise<unknown[]> => {
      const from = received.length;
      await new Promise<void>((resolve) => {
        waiting = () => received.length >= from + n && resolve();
        proxy.stdin.write(`${line}\n`);
      });
      return received.slice(from);
    };
    const lookup = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'lookup_order', arguments: { order_id: 'A-1' } } });
    const echo = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `echo ${id}` } } });
    const texts = (batch: unknown): Record<string, string> =>
      Object.fromEntries((batch as { id: number; result: { content: { text: string }[] } }[]).map((r) => [r.id, r.result.content[0]?.text ?? '']));

    const first = `[${JSON.stringify(lookup(1))}, ${JSON.stringify(echo(2))}]`;
    expect(texts((await send(first, 1))[0])).toEqual({ 1: 'order A-1 is locked (ORD-409)', 2: 'echo 2' });
    await send(JSON.stringify([lookup(3), echo(4)]), 1);
    // the third failing call is hinted: answered by the proxy in a batch of its own, the echo goes on to the server
    const third = await send(JSON.stringify([echo(5), lookup(6), { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } }]), 2);
    expect(texts(third[0])[6]).toMatch(/^\[loopwatch\] This call was not run: 'lookup_order' already failed twice/);
    expect(texts(third[1])).toEqual({ 5: 'echo 5' });
    // a batch of the refused call alone never reaches the server
    const refused = await send(JSON.stringify([lookup(7)]), 1);
    expect(texts(refused[0])[7]).toMatch(/^\[loopwatch\] This call was refused and not run/);
    proxy.stdin.end();
    await new Promise((resolve) => proxy.once('close', resolve));

    const toServer = teeBytes(tee).toServer.toString('utf8').split('\n').filter(Boolean);
    expect(toServer).toEqual([first, JSON.stringify([lookup(3), echo(4)]), `[${JSON.stringify(echo(5))},${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } })}]`]);
  });

  it('a 50 MB result passes whole, with the proxy holding a few copies of it at most', { timeout: 300_000 }, async () => {
    const size = 50 * 1024 * 1024;
    const { client, transport } = await connectThroughProxy([], ORDER_SERVER);
    closers.push(() => client.close());
    const pid = transport.process?.pid as number;
    for (let i = 0; i < 2; i++) {
      const r = await client.callTool({ name: 'big', arguments: { bytes: size } }, undefined, { timeout: 240_000 });
      expect(resultText(r).length).toBe(size);
    }
    const status = await import('node:fs').then((fs) => fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    const peakMb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
    await client.close();
    await transport.exit;
    console.log(`loopwatch mcp peak RSS over two 50 MB results: ${peakMb.toFixed(0)} MB`);
    // a Node process at rest is about 60-90 MB; each copy of the message is 50 MB: the chunks, the
    // joined bytes, the text and the parsed result, each let go once read (the engine reads the
    // first 8 MiB of the text and a digest: see engine-result.ts), and what the GC has not taken
    // yet of the first result when the second comes (280 to 380 MB measured under load)
    expect(peakMb).toBeLessThan(90 + 6 * 50);
  });
});
