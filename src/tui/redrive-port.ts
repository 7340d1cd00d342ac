/**
 * What the TUI needs from the DLQ engine to redrive a selection. The TUI
 * never moves a job itself: the implementation (`redrive-gateway.ts`) goes
 * through the engine's plan, confirmation-free apply (the dialog is the
 * confirmation), ledger, lock and audit in `src/dlq`.
 */
export interface PlanSplit {
  /** Jobs in the plan (the selection). */
  total: number;
  /** Jobs the run will move. */
  redrive: number;
  skipExpired: number;
  skipPartial: number;
  quarantined: number;
  /** Selected jobs that left the DLQ since the list was loaded (redriven, purged or expired elsewhere). */
  notInDlq: number;
  /** Malformed entries. */
  skipMalformed: number;
  /** Any other skip. */
  skipOther: number;
  queue: string | null;
}

export interface PlannedRedrive {
  split: PlanSplit;
  /** The engine's frozen plan, passed back unchanged to `apply`. */
  handle: unknown;
}

export interface RedriveProgress {
  /** The run being applied, once it is recorded (what a quit while it runs must name). */
  runId?: string;
  /** The command that resumes that run (shown if the run is cut short by an error). */
  resumeCommand?: string;
  done: number;
  total: number;
  moved: number;
  skipped: number;
  failed: number;
}

export interface RedriveResult {
  runId: string;
  status: string;
  moved: number;
  skipped: number;
  failed: number;
  /** Set when the run stopped early (Esc / Ctrl-C): the command that resumes it. */
  resumeCommand: string | null;
  /**
   * What the run left for later that `agentq dlq redrive` would have said (raw text): on SQS, the
   * SQS DLQ copies of the jobs it moved, and jobs not yet published. Shown, and said again on quit.
   */
  notes?: string[];
}

/** How the selection was made in the app, recorded in the run's `filters` next to the command's flags. */
export interface SelectionContext {
  /** The in-app filter when `R` was pressed (only what is set), e.g. `{ error_code: 'TOOL_TIMEOUT' }`. */
  inAppFilter: Record<string, unknown>;
  /** `a`'s label ("all 33 matching error=TOOL_TIMEOUT"), null for picked entries. */
  selection: string | null;
  /** Selected jobs the in-app filter hid. */
  hiddenByFilter: number;
  /**
   * The queue of the selected jobs as the list loaded them (null when they span several or none is
   * loaded): the dialog's title names it when none of them is in the DLQ any more (redriven from
   * another shell), where the plan, which takes its queue from the jobs it finds, has none.
   */
  queue?: string | null;
}

export interface RedrivePort {
  plan(jobIds: readonly string[], signal: AbortSignal, context?: SelectionContext): Promise<PlannedRedrive>;
  /** `reason`: the operator's, recorded in the audit (`agentq dlq runs`); null for the default. */
  apply(planned: PlannedRedrive, onProgress: (p: RedriveProgress) => void, signal: AbortSignal, reason?: string | null): Promise<RedriveResult>;
}
