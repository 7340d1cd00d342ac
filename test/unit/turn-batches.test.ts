/**
 * TurnBatches (src/backend/redis/turn-batches.ts): a batch that fills up is
 * sent at once, the rest at the end of the turn or on sendAll, per key, in
 * the order the items came.
 */
import { expect, it } from 'vitest';
import { TurnBatches } from '../../src/backend/redis/turn-batches.js';

function recorder(max: number) {
  const sent: Array<{ context: string; items: number[] }> = [];
  const batches = new TurnBatches<string, number>(max, (context, items) => sent.push({ context, items }));
  return { sent, batches };
}

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

it('sends a batch as soon as it is full, and the rest at the end of the turn, per key and in order', async () => {
  const { sent, batches } = recorder(3);
  for (let i = 1; i <= 7; i++) batches.add('a', 'ctx-a', i);
  batches.add('b', 'ctx-b', 100);
  // the two full batches of 'a' went out while the calls were still being made
  expect(sent).toEqual([
    { context: 'ctx-a', items: [1, 2, 3] },
    { context: 'ctx-a', items: [4, 5, 6] },
  ]);
  await endOfTurn();
  expect(sent.slice(2)).toEqual([
    { context: 'ctx-a', items: [7] },
    { context: 'ctx-b', items: [100] },
  ]);
  // nothing is sent twice, and a later turn starts new batches
  batches.add('a', 'ctx-a2', 8);
  await endOfTurn();
  expect(sent.slice(4)).toEqual([{ context: 'ctx-a2', items: [8] }]);
});

it('sendAll sends what is waiting at once, and the end of the turn then sends nothing more', async () => {
  const { sent, batches } = recorder(10);
  batches.add('a', 'x', 1);
  batches.add('a', 'x', 2);
  batches.sendAll();
  expect(sent).toEqual([{ context: 'x', items: [1, 2] }]);
  await endOfTurn();
  expect(sent).toHaveLength(1);
});
