/**
 * AWS Signature Version 4 for the SQS wire client (wire.ts): header signing of
 * one POST with a JSON body, nothing more (no query-string signing, no
 * presigning, no chunked payloads). Written against the SigV4 specification
 * and checked against the SDK's own signer (@smithy/signature-v4) in
 * test/backend/sqs-wire.test.ts: same request, date and credentials → the
 * same Authorization header, with and without a session token.
 *
 * Why our own: the SDK's signer is correct but general (it clones the request,
 * walks every header against a deny list, builds the canonical request
 * through several layers); per call this is a few HMACs and two SHA-256 over
 * small strings, and the signing key (four HMACs) is derived once per
 * day/region/secret and cached.
 */
import * as crypto from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';

export interface SigningIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignInput {
  method: string;
  /** The Host header value as sent (host, or host:port when the port is not the scheme's default). */
  host: string;
  /** Absolute path, already URI-encoded as sent ("/" for SQS's JSON protocol). */
  path: string;
  /** Headers to sign besides the ones signRequest adds (names lowercase). */
  headers: Record<string, string>;
  body: string | Buffer;
  region: string;
  service: string;
  identity: SigningIdentity;
  /** Signing time (default now). */
  date?: Date;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

let lastSecond = NaN;
let lastDate = { long: '', short: '' };

/** `20261129T151022Z` and `20261129` of a date (the last one kept: calls come many per second). */
export function amzDate(d: Date): { long: string; short: string } {
  const second = Math.floor(d.getTime() / 1000);
  if (second === lastSecond) return lastDate;
  const iso = d.toISOString(); // 2026-11-29T15:10:22.123Z
  const long = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  lastSecond = second;
  lastDate = { long, short: long.slice(0, 8) };
  return lastDate;
}

// crypto.hash (Node 20.12+, one call, no Hash object) where there is one.
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'hex') => string }).hash;
export const sha256Hex: (data: string | Buffer) => string = oneShot
  ? (data) => oneShot('sha256', data, 'hex')
  : (data) => createHash('sha256').update(data).digest('hex');

/**
 * Signing keys by secret/day/region/service. A process uses one or two
 * identities a day (a refreshed role's new secret adds one); bounded anyway.
 */
const keyCache = new Map<string, Buffer>();

function signingKey(secret: string, day: string, region: string, service: string): Buffer {
  const id = `${secret}\u0000${day}\u0000${region}\u0000${service}`;
  let key = keyCache.get(id);
  if (!key) {
    const kDate = createHmac('sha256', `AWS4${secret}`).update(day).digest();
    const kRegion = createHmac('sha256', kDate).update(region).digest();
    const kService = createHmac('sha256', kRegion).update(service).digest();
    key = createHmac('sha256', kService).update('aws4_request').digest();
    if (keyCache.size >= 16) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

/**
 * The headers to send: `input.headers` plus host, x-amz-date,
 * x-amz-content-sha256, x-amz-security-token (when the identity has a
 * session token) and authorization; all of them signed. Header values are trimmed and inner runs of spaces collapsed
 * in the canonical form, as the specification says.
 */
export function signRequest(input: SignInput): Record<string, string> {
  const { long, short } = amzDate(input.date ?? new Date());
  const payloadHash = sha256Hex(input.body);
  // x-amz-content-sha256 as the SDK's signer sends it (SQS does not require it; the same signed request as the SDK's is easier to trust and to test).
  const out: Record<string, string> = { ...input.headers, host: input.host, 'x-amz-date': long, 'x-amz-content-sha256': payloadHash };
  if (input.identity.sessionToken) out['x-amz-security-token'] = input.identity.sessionToken;
  const lower: Record<string, string> = {};
  for (const k of Object.keys(out)) lower[k.toLowerCase()] = out[k]!;
  const names = Object.keys(lower).sort();
  let canonicalHeaders = '';
  for (const n of names) {
    const v = lower[n]!;
    canonicalHeaders += `${n}:${/^\s|\s$|\s\s|[\t\n\r]/.test(v) ? v.trim().replace(/\s+/g, ' ') : v}\n`;
  }
  const signedHeaders = names.join(';');
  const canonicalRequest = `${input.method}\n${input.path}\n\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`;
  const scope = `${short}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = `${ALGORITHM}\n${long}\n${scope}\n${sha256Hex(canonicalRequest)}`;
  const signature = createHmac('sha256', signingKey(input.identity.secretAccessKey, short, input.region, input.service)).update(stringToSign).digest('hex');
  out.authorization = `${ALGORITHM} Credential=${input.identity.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return out;
}
