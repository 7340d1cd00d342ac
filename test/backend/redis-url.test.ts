/** Redis connection URLs: schemes, hosts, options, and the rules a bad URL breaks (exit 78). */
import { describe, expect, it } from 'vitest';
import { parseRedisUrl, redact, redisStoreId } from '../../src/backend/redis/url.js';
import { parseSqsUrl } from '../../src/backend/sqs/url.js';
import { ConfigError } from '../../src/core/errors.js';

describe('parseRedisUrl', () => {
  it('refuses a parameter given twice (exit 78, naming it), as the SQS URL does', () => {
    for (const [parse, url] of [
      [parseRedisUrl, 'redis://127.0.0.1:6379?shards=2&shards=3'],
      [parseRedisUrl, 'redis+cluster://h:7000?prefix=a&shards=2&prefix=a'],
      [(u: string) => parseSqsUrl(u, u, {}), 'sqs://eu-west-1/agentq?wait=5&wait=10'],
    ] as const) {
      let err: unknown;
      try {
        parse(url);
      } catch (e) {
        err = e;
      }
      expect(err, url).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).exitCode).toBe(78);
      expect((err as ConfigError).message).toMatch(/gives the parameter "(shards|prefix|wait)" more than once/);
    }
  });

  it('reads standalone, TLS and cluster forms', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6380')).toMatchObject({ cluster: false, tls: false, nodes: [{ host: '127.0.0.1', port: 6380 }], db: 0, shards: 1, prefix: 'aq' });
    expect(parseRedisUrl('rediss://user:s3cret@redis.internal:6390/2')).toMatchObject({ tls: true, username: 'user', password: 's3cret', db: 2 });
    expect(parseRedisUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001')).toMatchObject({ cluster: true, tls: false, nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }] });
    expect(parseRedisUrl('rediss+cluster://h1:7000?shards=6&prefix=prod&events_maxlen=5000')).toMatchObject({ cluster: true, tls: true, shards: 6, prefix: 'prod', eventsMaxLen: 5000 });
    expect(parseRedisUrl('redis://localhost')).toMatchObject({ nodes: [{ host: 'localhost', port: 6379 }] });
  });

  it('never shows the password', () => {
    const o = parseRedisUrl('rediss://user:s3cret@redis.internal:6390');
    expect(o.redacted).toBe('rediss://user:***@redis.internal:6390');
    expect(redact('redis://t0ken@h:1')).toBe('redis://***@h:1');
    // an unencoded @ in the password: hidden up to the last @, and refused without a word of it
    expect(redact('redis://admin:Xy@9f3kLmQ@127.0.0.1:7501')).toBe('redis://admin:***@127.0.0.1:7501');
    for (const url of ['redis://admin:Xy@9f3kLmQ@127.0.0.1:7501', 'redis://u:hunter%zz@host']) {
      let msg = '';
      try {
        parseRedisUrl(url);
      } catch (e) {
        msg = `${(e as ConfigError).message} ${(e as ConfigError).hint}`;
      }
      expect(msg).not.toMatch(/9f3kLmQ|hunter|Xy/);
    }
    expect(parseRedisUrl('redis://admin:Xy%409f3kLmQ@127.0.0.1:7501')).toMatchObject({ username: 'admin', password: 'Xy@9f3kLmQ', nodes: [{ host: '127.0.0.1', port: 7501 }] });
  });

  it('refuses what it cannot use, naming the rule, with exit 78', () => {
    const bad = [
      ['redis://h1:1,h2:2', /cluster form/],
      ['redis+cluster://h:1/3', /only database 0/],
      ['redis://h:99999', /port must be 1-65535/],
      ['redis://h:1?shards=0', /shards must be an integer from 1 to 1024/],
      // regression: Number() read these as 16 and 10 shards (a queue keeps its shard count for good)
      ['redis://h:1?shards=0x10', /shards must be an integer from 1 to 1024, got "0x10"/],
      ['redis://h:1?events_maxlen=1e5', /events_maxlen must be an integer/],
      ['redis://h:1?prefix=a%20b', /prefix must be/],
      ['http://h:1', /not a Redis URL/],
      ['redis://h:1?shard=4', /unknown parameter "shard" \(did you mean shards\?\)/],
      ['redis://h:1?password=pw', /unknown parameter "password"$/],
      ['redis://u:hunter%zz@host', /bad percent-escape in its user name or password/],
      ['redis://%E0%A4%A@host', /bad percent-escape/],
      ['redis://admin:Xy@9f3kLmQ@127.0.0.1:7501', /unencoded "@" in its user name or password/],
      // a list of seeds pasted with spaces: " 10.0.0.2" is no host name (it was looked up in DNS, exit 75)
      ['redis+cluster://10.0.0.1:7000, 10.0.0.2:7000', /bad host:port " 10\.0\.0\.2:7000" in Redis URL/],
      ['redis://10.0.0.1 :6379', /bad host:port "10\.0\.0\.1 :6379" in Redis URL/],
    ] as const;
    for (const [url, rule] of bad) {
      let err: unknown;
      try {
        parseRedisUrl(url);
      } catch (e) {
        err = e;
      }
      expect(err, url).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message, url).toMatch(rule);
      expect((err as ConfigError).exitCode).toBe(78);
    }
  });
});

describe('redisStoreId: the same store however the URL is written', () => {
  it('ignores the user, the password, the default database written out, the seed order and tuning parameters; not the database or the prefix', () => {
    const id = (url: string) => redisStoreId(parseRedisUrl(url));
    const a = id('redis://127.0.0.1:7/0');
    expect(id('redis://alice:pw@127.0.0.1:7')).toBe(a);
    expect(id('rediss://127.0.0.1:7/0?events_maxlen=5000')).toBe(a);
    expect(id('redis://127.0.0.1:7/1')).not.toBe(a);
    expect(id('redis://127.0.0.1:7?prefix=other')).not.toBe(a);
    expect(id('redis+cluster://10.0.0.2:7,10.0.0.1:7')).toBe(id('redis+cluster://10.0.0.1:7,10.0.0.2:7'));
  });
});
