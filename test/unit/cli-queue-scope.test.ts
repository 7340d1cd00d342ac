import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/core/errors.js';
import { scopeToContextQueue, type ScopedOptions } from '../../src/cli/queue-scope.js';

const scoped = (o: ScopedOptions, scope: 'read' | 'bulk', contextQueue: string | undefined) => {
  let read = 0;
  scopeToContextQueue(o, scope, () => (read++, contextQueue));
  return { queue: o.queue, read };
};

describe("the context's queue as the default --queue", () => {
  it('fills --queue from the context, and leaves a given --queue alone without reading the config', () => {
    expect(scoped({}, 'read', 'research')).toEqual({ queue: 'research', read: 1 });
    expect(scoped({ queue: 'billing' }, 'bulk', 'research')).toEqual({ queue: 'billing', read: 0 });
    expect(scoped({}, 'read', undefined)).toEqual({ queue: undefined, read: 1 });
  });
  it('--all-queues leaves it empty, and refuses --queue beside it', () => {
    expect(scoped({ allQueues: true }, 'read', 'research')).toEqual({ queue: undefined, read: 0 });
    expect(() => scoped({ allQueues: true, queue: 'x' }, 'read', 'research')).toThrow(ValidationError);
  });
  it("a bulk action with --plan or --resume acts on the queue its plan or run names; tail --job on its job's", () => {
    expect(scoped({ plan: 'p.json' }, 'bulk', 'research').queue).toBeUndefined();
    expect(scoped({ resume: 'run_X' }, 'bulk', 'research').queue).toBeUndefined();
    expect(scoped({ plan: 'p.json' }, 'read', 'research').queue).toBe('research');
    expect(scoped({ job: 'job_X' }, 'read', 'research').queue).toBeUndefined();
  });
});
