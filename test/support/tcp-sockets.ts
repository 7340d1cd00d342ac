/**
 * This machine's IPv4 TCP sockets as /proc/net/tcp lists them (Linux only, as the tests that use
 * it). A frozen (SIGSTOPped) server reads nothing, so what a client sent waits in the server
 * socket's receive queue: a test can wait until a command has really sent its request, or check
 * that it sent nothing more, instead of sleeping.
 */
import { readFileSync } from 'node:fs';

export interface TcpSocket {
  localPort: number;
  remotePort: number;
  /** The kernel's state code: '01' ESTABLISHED, '08' CLOSE_WAIT, … */
  state: string;
  /** Bytes received and not yet read by the socket's owner. */
  rxQueue: number;
}

export function tcpSockets(): TcpSocket[] {
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length > 4)
    .map((f) => ({
      localPort: parseInt(f[1]!.split(':')[1]!, 16),
      remotePort: parseInt(f[2]!.split(':')[1]!, 16),
      state: f[3]!,
      rxQueue: parseInt(f[4]!.split(':')[1]!, 16),
    }));
}

/** Whether a request sits unread at a (frozen) server listening on `port`. */
export function requestPendingAt(port: number): boolean {
  return tcpSockets().some((s) => s.localPort === port && s.state === '01' && s.rxQueue > 0);
}
