import { useStdout } from 'ink';
import { useEffect, useState } from 'react';
import type { TerminalSize } from './layout.js';

const FALLBACK: TerminalSize = { columns: 100, rows: 24 };

/** The terminal's size, following resizes. A fixed `size` (tests) wins over the stream's. */
export function useTerminalSize(fixed?: TerminalSize): TerminalSize {
  const { stdout } = useStdout();
  const read = (): TerminalSize => fixed ?? { columns: stdout.columns || FALLBACK.columns, rows: stdout.rows || FALLBACK.rows };
  const [size, setSize] = useState<TerminalSize>(read);
  useEffect(() => {
    if (fixed !== undefined) {
      setSize(fixed);
      return;
    }
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [stdout, fixed?.columns, fixed?.rows]);
  return size;
}
