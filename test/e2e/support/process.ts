import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A server process started by a test or by `npm run stack`, its output in a log file. */
export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Exit code (or signal name) once the process has ended; undefined while it runs. */
  exitStatus(): string | undefined;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ManagedProcess>();
let exitHookInstalled = false;

/** Kills what is still running if the test process exits without its afterAll (a crash, Ctrl-C). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const p of running) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

export interface StartOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Outlive this Node process (the stack); tests leave it false so the exit hook can clean up. */
  readonly detached?: boolean;
}

export function startProcess(options: StartOptions): ManagedProcess {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = openSync(options.logFile, 'a');
  const child = spawn(options.command, [...options.args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', log, log],
    detached: options.detached ?? false,
  });
  closeSync(log);
  if (child.pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);
  let status: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      status = signal ?? String(code);
      resolve();
    });
    child.once('error', (e) => {
      status = `spawn error: ${e.message}`;
      resolve();
    });
  });
  const managed: ManagedProcess = {
    name: options.name,
    pid: child.pid,
    logFile: options.logFile,
    exitStatus: () => status,
    async stop(graceMs = 10_000) {
      running.delete(managed);
      if (status !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  if (options.detached) child.unref();
  else {
    running.add(managed);
    installExitHook();
  }
  return managed;
}

export function logTail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log file)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** What is awaited, for the error message. */
  readonly what: string;
  /** Fail at once, with its log, when one of these has exited. */
  readonly processes?: readonly ManagedProcess[];
}

/** Polls `check` until it returns a value other than undefined; throws with context on timeout. */
export async function waitFor<T>(check: () => Promise<T | undefined>, options: WaitOptions): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    for (const p of options.processes ?? []) {
      const status = p.exitStatus();
      if (status !== undefined) {
        throw new Error(`${p.name} exited (${status}) while waiting for ${options.what}. Log ${p.logFile}:\n${logTail(p.logFile)}`);
      }
    }
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${options.what}${why}`);
    }
    await sleep(options.intervalMs ?? 250);
  }
}

/** GET a loopback URL; undefined when nothing answers yet. */
export async function httpGet(url: string): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}
