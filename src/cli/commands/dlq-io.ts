/**
 * What the `dlq` commands need from the outside world, as one injected
 * object: the CLI builds it from its `CommandContext` (see `dlq-context.ts`),
 * tests build it by hand. Nothing in the dlq commands touches `process`.
 */
import type { Backend } from '../../backend/contract.js';
import type { Clock } from '../../core/clock.js';
import type { Identity, ProcessProbe } from '../../dlq/lock.js';
import type { OutputTarget } from '../output/format.js';

export interface DlqIo {
  /** Opened on first use, so usage errors never wait for a connection. */
  backend(): Promise<Backend>;
  clock: Clock;
  /** stdout. `drain` resolves once the stream can take more (bounded memory for `--all`). */
  out: OutputTarget & { drain?: () => Promise<void>; isTTY: boolean; writeBytes(b: Uint8Array): Promise<void> };
  /** True when the operator chose the format (-o/--json), rather than the terminal default. */
  formatChosen: boolean;
  /** stderr: progress, prompts, warnings. */
  err: { write(s: string): void; isTTY: boolean };
  /** stdin and stdout are terminals, not CI, not --no-input. */
  interactive: boolean;
  /** Asks on the terminal; only called when `interactive`. */
  prompt(question: string): Promise<string>;
  /** Aborts on the first Ctrl-C: bulk actions finish the current batch, record the ledger and stop. */
  signal: AbortSignal;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  newRunId(): string;
  identity: Identity;
  /** Throws PermissionError (exit 4) in a read-only context. */
  assertMutable(what: string): void;
  /** What a first Ctrl-C that ends the command before it changes anything says (see `CommandContext.interruptNote`). */
  interruptNote?(note: string | null): void;
  /**
   * The trace link template (`traceUrl`, `AGENTQ_TRACE_URL`; see cli/trace-link.ts), or null when
   * none is set. Read when asked: a bad one is exit 78, for the commands that show links.
   */
  traceUrlTemplate?(): string | null;
  /** The active context's name, shown in confirmations and recorded in the audit. */
  contextName: string | null;
  probe?: ProcessProbe;
  readFile(path: string): Promise<string>;
  /** Writes a file atomically (a plan file is never left half-written). */
  writeFile(path: string, text: string): Promise<void>;
}
