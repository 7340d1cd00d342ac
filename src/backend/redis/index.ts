export { RedisBackend, openRedis, MAX_EFFECTS_PER_JOB, type RedisBackendDeps } from './redis-backend.js';
export { parseRedisUrl, isRedisUrl, redact, type RedisUrlOptions } from './url.js';
