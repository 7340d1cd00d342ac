import { describe, expect, it } from 'vitest';
import { IllegalTransitionError } from '../../src/core/errors.js';
import { JOB_STATES } from '../../src/core/schemas.js';
import { assertTransition, canTransition, isTerminal, outcomeFor, TRANSITIONS } from '../../src/core/states.js';

describe('job state machine', () => {
  it('terminal states have no way out except dead (redrive, expire)', () => {
    for (const s of JOB_STATES) {
      if (isTerminal(s) && s !== 'dead') expect(TRANSITIONS[s]).toEqual([]);
    }
    expect(TRANSITIONS.dead).toEqual(['queued', 'expired']);
  });
  it('refuses illegal transitions with a typed error', () => {
    expect(canTransition('succeeded', 'queued')).toBe(false);
    expect(() => assertTransition('job_x', 'cancelled', 'running')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('job_x', 'queued', 'running')).not.toThrow();
  });
  it('a non-success with effects started is partially_completed', () => {
    expect(outcomeFor('dead', true)).toBe('partially_completed');
    expect(outcomeFor('dead', false)).toBe('failed');
    expect(outcomeFor('cancelled', true)).toBe('partially_completed');
    expect(outcomeFor('expired', false)).toBe('expired');
    expect(outcomeFor('succeeded', true)).toBe('succeeded');
    expect(outcomeFor('running', false)).toBeNull();
  });
});
