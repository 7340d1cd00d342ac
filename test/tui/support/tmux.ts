/**
 * A real terminal for end-to-end TUI tests: a private tmux server (own
 * socket, own config) running one command in a pane of a fixed size.
 * `capture()` returns what a person would see; `waitFor` polls it with a
 * deadline (no fixed sleeps).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pollUntil } from '../../support/poll.js';

export class TmuxPane {
  private readonly socket: string;
  private readonly dir: string;
  private readonly target = 'tui:0.0';

  private constructor(socket: string, dir: string) {
    this.socket = socket;
    this.dir = dir;
  }

  /**
   * Starts `argv` (with exactly `env`) in a detached `columns`×`rows` pane. Its stderr goes to a
   * file (`stderr()`) unless `stderrOnScreen`: then it is shown, as a prompt written to stderr is.
   */
  static start(argv: string[], env: Record<string, string>, size = { columns: 160, rows: 40 }, opts: { stderrOnScreen?: boolean } = {}): TmuxPane {
    const dir = mkdtempSync(join(tmpdir(), 'agentq-tmux-'));
    const conf = join(dir, 'tmux.conf');
    // escape-time 0: tmux otherwise holds a lone Esc for 500 ms to see if a sequence follows.
    // remain-on-exit: keep the pane after the command ends, to read its exit status.
    writeFileSync(conf, 'set -s escape-time 0\nset -g remain-on-exit on\nset -g status off\nset -g default-terminal xterm-256color\n');
    const pane = new TmuxPane(`agentq-tui-${process.pid}-${Math.random().toString(36).slice(2, 8)}`, dir);
    const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    // stderr goes to a file, so a failing test can show why the command ended.
    // The shell records the exit status in a file: on a loaded machine tmux can mark the pane dead
    // (pty closed) without ever recording #{pane_dead_status}, which left tests waiting for nothing.
    const wrapped = ['sh', '-c', opts.stderrOnScreen ? '"$@"; echo $? > "$0.status"' : '"$@" 2>>"$0"; echo $? > "$0.status"', pane.stderrPath, ...argv];
    pane.tmux('-f', conf, 'new-session', '-d', '-s', 'tui', '-x', String(size.columns), '-y', String(size.rows), '--', 'env', '-i', ...envArgs, ...wrapped);
    return pane;
  }

  get stderrPath(): string {
    return join(this.dir, 'stderr.txt');
  }

  stderr(): string {
    try {
      return readFileSync(this.stderrPath, 'utf8');
    } catch {
      return '';
    }
  }

  tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** Named keys (`Enter`, `Escape`, `Tab`, `Down`) or single characters. */
  keys(...keys: string[]): void {
    for (const k of keys) this.tmux('send-keys', '-t', this.target, k);
  }

  /** Literal text, character by character as typed. */
  type(text: string): void {
    this.tmux('send-keys', '-t', this.target, '-l', text);
  }

  capture(): string {
    return this.tmux('capture-pane', '-p', '-t', this.target);
  }

  info(format: string): string {
    return this.tmux('display-message', '-p', '-t', this.target, format).trim();
  }

  async waitFor(text: string | RegExp | ((screen: string) => boolean), timeoutMs = 30_000): Promise<string> {
    const test = (s: string) => (typeof text === 'string' ? s.includes(text) : typeof text === 'function' ? text(s) : text.test(s));
    try {
      return await pollUntil(() => {
        const screen = this.capture();
        return test(screen) && screen;
      }, { timeoutMs, intervalMs: 25, what: `the terminal to show ${String(text)}` });
    } catch (e) {
      throw new Error(`${(e as Error).message}\n--- pane ---\n${this.info('#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal} pid=#{pane_pid}')}\n--- screen ---\n${this.capture()}\n--- stderr ---\n${this.stderr()}`);
    }
  }

  /** Resolves with the exit status once the command has ended. */
  async exitStatus(timeoutMs = 60_000): Promise<number> {
    try {
      const s = await pollUntil(() => {
        try {
          const text = readFileSync(`${this.stderrPath}.status`, 'utf8').trim();
          return text === '' ? false : text;
        } catch {
          return false;
        }
      }, { timeoutMs, what: 'the command to exit' });
      return Number(s);
    } catch (e) {
      // Show what the person would have seen: a hang at exit is otherwise impossible to diagnose from CI.
      throw new Error(`${(e as Error).message}\n--- pane ---\n${this.info('#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal} pid=#{pane_pid}')}\n--- screen ---\n${this.capture()}\n--- stderr ---\n${this.stderr()}`);
    }
  }

  /** Sends `signal` to the command itself (the shell wrapper's child), as `kill -TERM` would. */
  signal(signal: NodeJS.Signals): void {
    const shell = this.info('#{pane_pid}');
    const child = execFileSync('pgrep', ['-P', shell], { encoding: 'utf8' }).trim().split('\n')[0];
    if (!child) throw new Error('the command is not running');
    process.kill(Number(child), signal);
  }

  kill(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
