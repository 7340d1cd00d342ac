#!/usr/bin/env node
/**
 * Seeds a DLQ (SQLite or Redis) for the TUI benchmark through the backend
 * contract (submit → claim → fail permanently, many calls in flight), from
 * the built dist/. The mix looks
 * like a real bad night: a few error codes and workflows, many tenants, 5 %
 * expired, 2 % partial.
 *
 *   node bench/tui-seed.mjs URL N [queue]      (URL: sqlite:PATH.db or redis://127.0.0.1:PORT)
 */
import { ManualClock, seededRandom } from '../dist/core/clock.js';
import { openBackend } from '../dist/backend/open.js';

const [url, nText = '100000', queue = 'research'] = process.argv.slice(2);
if (!url || !/^(sqlite|redis):/.test(url)) {
  console.error('usage: node bench/tui-seed.mjs URL N [queue]   (sqlite:PATH or redis://HOST:PORT)');
  process.exit(2);
}
const n = Number(nText);
const CODES = ['PROVIDER_429', 'PROVIDER_429', 'PROVIDER_429', 'TOOL_TIMEOUT', 'TOOL_TIMEOUT', 'SCHEMA_INVALID', 'BUDGET_EXCEEDED', 'UPSTREAM_503'];
const WORKFLOWS = ['research_report:v3', 'summarise:v1', 'triage_ticket:v2', 'draft_email:v5'];
const random = seededRandom(42);
// Seeded an hour in the past so short deadlines have passed when the TUI opens.
const clock = new ManualClock(Date.now() - 3_600_000);
const backend = await openBackend(url, { clock, random });
const pick = (xs) => xs[Math.floor(random() * xs.length)];

const t0 = Date.now();
const partial = new Set();
const CHUNK = 2000;
// Calls in flight at once: Redis round trips overlap (ioredis pipelines what is sent together),
// which makes seeding 100,000 entries minutes faster than one awaited call at a time. The mix is
// the same as before; job ids differ (they draw from the same seeded random, now in another order).
const IN_FLIGHT = 250;
async function inBatches(items, fn) {
  for (let i = 0; i < items.length; i += IN_FLIGHT) await Promise.all(items.slice(i, i + IN_FLIGHT).map(fn));
}
for (let done = 0; done < n; done += CHUNK) {
  const m = Math.min(CHUNK, n - done);
  const requests = [];
  const isPartial = [];
  for (let i = 0; i < m; i++) {
    const r = random();
    requests.push({
      workflow: pick(WORKFLOWS),
      queue,
      tenant_id: `tenant-${Math.floor(random() * 200)}`,
      input: JSON.stringify({ topic: `topic ${done + i}`, pages: Math.floor(random() * 40) }),
      max_attempts: 1,
      deadline_at: new Date(clock.now() + (r < 0.05 ? 60_000 : 7 * 86_400_000)).toISOString(),
    });
    isPartial.push(random() < 0.02);
  }
  await inBatches(requests.map((req, i) => [req, isPartial[i]]), async ([req, p]) => {
    const { job } = await backend.submit(req);
    if (p) partial.add(job.job_id);
  });
  for (;;) {
    const leases = await backend.claim({ queue, workerId: 'seeder', max: 500, leaseMs: 600_000 });
    if (leases.length === 0) break;
    const failures = leases.map((lease) => {
      const code = pick(CODES);
      return { lease, failure: { code, message: `${code.toLowerCase()} after ${Math.floor(random() * 90)}s`, retryable: false } };
    });
    await inBatches(failures, async ({ lease, failure }) => {
      if (partial.has(lease.jobId)) await backend.beginEffect(lease, 'send-email');
      await backend.fail(lease, failure);
    });
  }
  process.stderr.write(`\rseeded ${done + m}/${n} (${Math.round(((done + m) * 1000) / (Date.now() - t0))}/s)`);
}
process.stderr.write('\n');
await backend.close();
