import { expect, it } from 'vitest';
import { absoluteStoreUrl } from '../../src/cli/commands/worker.js';

it('hands handlers an absolute sqlite path, so `agentq job` finds the store after a cd', () => {
  expect(absoluteStoreUrl('sqlite:data/q.db', '/srv/app')).toBe('sqlite:/srv/app/data/q.db');
  expect(absoluteStoreUrl('sqlite:/var/lib/q.db', '/srv/app')).toBe('sqlite:/var/lib/q.db');
  expect(absoluteStoreUrl('sqlite::memory:', '/srv/app')).toBe('sqlite::memory:');
  expect(absoluteStoreUrl('sqlite:///abs/q.db', '/srv/app')).toBe('sqlite:///abs/q.db');
  expect(absoluteStoreUrl('sqlite:~/q.db', '/srv/app')).toBe('sqlite:~/q.db');
  expect(absoluteStoreUrl('redis://127.0.0.1:6379/0', '/srv/app')).toBe('redis://127.0.0.1:6379/0');
});
