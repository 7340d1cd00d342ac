// Replaces the `restore-cursor` package in the TUI bundle (build-tui-bundle.mjs aliases it here).
//
// Ink hides the cursor on the terminal it draws on (stdout, through cli-cursor) and shows it again
// when it unmounts. cli-cursor also registers restore-cursor as a backstop for an exit without an
// unmount, and restore-cursor writes the show-cursor escape to process.stderr, whatever stderr is:
// `agentq dlq browse 2>run.log` left ESC[?25h in the log. This backstop writes it where the cursor
// was hidden, and only to a terminal.
import process from 'node:process';
import signalExit from 'signal-exit';

let registered = false;

export default function restoreCursor() {
  if (registered) return;
  registered = true;
  signalExit(
    () => {
      if (process.stdout.isTTY) process.stdout.write('\u001B[?25h');
    },
    { alwaysLast: true },
  );
}
