/**
 * agentq's own SQS client for the hot calls (src/backend/sqs/wire.ts, sigv4.ts):
 * - the signer against the SDK's own (@smithy/signature-v4): the same
 *   Authorization header for the same request, date and credentials;
 * - every wire operation against fauxqs, the results compared with what the
 *   SDK returns for the same messages;
 * - errors as the rest of agentq expects them (a missing queue is a config
 *   error, a refused connection "retry later"), retries, MD5 checks, the
 *   endpoint and credentials taken from the SDK client — against tiny local
 *   HTTP servers where fauxqs cannot be made to misbehave.
 */
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isConnectionError, isQueueMissing, toAgentqError } from '../../src/backend/sqs/client.js';
import { signRequest } from '../../src/backend/sqs/sigv4.js';
import { parseWireError, SqsWireClient } from '../../src/backend/sqs/wire.js';
import { ConfigError, RetryLaterError } from '../../src/core/errors.js';
import { useEmulatorCredentials } from '../conformance/sqs-fixture.js';
import { freePort } from '../support/redis-server.js';
import { startSqsServer, type SqsServer } from '../support/sqs-server.js';

useEmulatorCredentials();

class NodeSha256 {
  private readonly h;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    const key = secret === undefined || typeof secret === 'string' ? secret : ArrayBuffer.isView(secret) ? Buffer.from(secret.buffer, secret.byteOffset, secret.byteLength) : Buffer.from(secret);
    this.h = key !== undefined ? createHmac('sha256', key) : createHash('sha256');
  }
  update(d: string | Uint8Array): void {
    this.h.update(d);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
}

describe('SigV4 signer', () => {
  const cases = [
    { name: 'long-term keys, AWS host', creds: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }, host: 'sqs.eu-west-1.amazonaws.com', region: 'eu-west-1' },
    {
      name: 'a session token (role, SSO), host with a port, unicode body',
      creds: { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'secret/with+chars', sessionToken: 'FwoGZXIvYXdzEJr//////////wEaD+token==' },
      host: '127.0.0.1:4566',
      region: 'us-east-1',
      body: '{"QueueUrl":"http://127.0.0.1:4566/000000000000/q","Entries":[{"Id":"m0","MessageBody":"héllo \\u0000 ✓"}]}',
    },
  ];
  for (const c of cases) {
    for (const date of [new Date('2026-11-29T15:10:22Z'), new Date('2027-01-01T00:00:00.999Z')]) {
      it(`gives the SDK signer's Authorization header: ${c.name}, ${date.toISOString()}`, async () => {
        const body = c.body ?? '{"QueueUrl":"https://sqs.eu-west-1.amazonaws.com/123456789012/agentq-q-batch","MaxNumberOfMessages":10}';
        const headers = { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ReceiveMessage', 'x-amzn-query-mode': 'true' };
        const ours = signRequest({ method: 'POST', host: c.host, path: '/', headers, body: Buffer.from(body), region: c.region, service: 'sqs', identity: c.creds, date });
        const sdk = new SignatureV4({ credentials: c.creds, region: c.region, service: 'sqs', sha256: NodeSha256 });
        const [hostname, port] = c.host.split(':');
        const signed = await sdk.sign(
          { method: 'POST', protocol: 'https:', hostname: hostname!, ...(port ? { port: Number(port) } : {}), path: '/', query: {}, headers: { ...headers, host: c.host }, body },
          { signingDate: date },
        );
        expect(ours.authorization).toBe(signed.headers.authorization);
        // Every header the SDK signed is sent, with the same value.
        for (const [k, v] of Object.entries(signed.headers)) expect(ours[k.toLowerCase()]).toBe(v);
        if ('sessionToken' in c.creds) expect(ours['x-amz-security-token']).toBe(c.creds.sessionToken);
        else expect(ours['x-amz-security-token']).toBeUndefined();
      });
    }
  }
});

describe('wire client against fauxqs', () => {
  let server: SqsServer;
  let sdk: SQSClient;
  let wire: SqsWireClient;
  let n = 0;
  const newQueue = async () => (await sdk.send(new CreateQueueCommand({ QueueName: `wire-${process.pid}-${++n}` }))).QueueUrl!;
  beforeAll(async () => {
    server = await startSqsServer();
    sdk = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint });
    wire = new SqsWireClient(sdk, { region: 'us-east-1', endpoint: server.endpoint });
  });
  afterAll(async () => {
    wire?.destroy();
    sdk?.destroy();
    await server?.stop();
  });

  const attrs = {
    'agentq-format': { DataType: 'String', StringValue: 'agentq.envelope.v1' },
    'agentq-attempt': { DataType: 'Number', StringValue: '2' },
    blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 2, 250, 255]) },
  };
  const bodies = ['{"job_id":"x","text":"héllo ✓ \\u2028"}', 'plain text, not JSON', 'x'.repeat(5000)];

  it('sends a batch, receives it with every attribute as the SDK does, then deletes it', async () => {
    const q = await newQueue();
    const sent = await wire.sendMessageBatch({ QueueUrl: q, Entries: bodies.map((b, i) => ({ Id: `m${i}`, MessageBody: b, MessageAttributes: attrs })) });
    expect(sent.Failed ?? []).toEqual([]);
    expect(sent.Successful!.map((s) => s.Id).sort()).toEqual(['m0', 'm1', 'm2']);
    const got: Message[] = [];
    while (got.length < 3) {
      const r = await wire.receiveMessage({ QueueUrl: q, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'], VisibilityTimeout: 30 });
      got.push(...(r.Messages ?? []));
    }
    expect(got.map((m) => m.Body).sort()).toEqual([...bodies].sort());
    for (const m of got) {
      expect(m.MessageAttributes).toEqual(attrs);
      expect(m.MessageAttributes!.blob!.BinaryValue).toBeInstanceOf(Uint8Array);
      expect(m.Attributes?.ApproximateReceiveCount).toBe('1');
      expect(m.MD5OfBody).toBe(createHash('md5').update(m.Body!).digest('hex'));
    }
    const del = await wire.deleteMessageBatch({ QueueUrl: q, Entries: got.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle! })) });
    expect(del.Successful).toHaveLength(3);
    expect((await wire.receiveMessage({ QueueUrl: q, MaxNumberOfMessages: 10 })).Messages ?? []).toEqual([]);
  });

  it('returns the same message shape as the SDK for the same message', async () => {
    const q = await newQueue();
    await sdk.send(new SendMessageBatchCommand({ QueueUrl: q, Entries: [{ Id: 'a', MessageBody: bodies[0], MessageAttributes: attrs }] }));
    await wire.sendMessageBatch({ QueueUrl: q, Entries: [{ Id: 'b', MessageBody: bodies[0], MessageAttributes: attrs }] });
    const viaSdk = (await sdk.send(new ReceiveMessageCommand({ QueueUrl: q, MaxNumberOfMessages: 1, MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'] }))).Messages![0]!;
    const viaWire = (await wire.receiveMessage({ QueueUrl: q, MaxNumberOfMessages: 1, MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'] })).Messages![0]!;
    const shape = (m: Message) => ({ ...m, MessageId: '-', ReceiptHandle: '-', Attributes: Object.keys(m.Attributes ?? {}).sort() });
    expect(shape(viaWire)).toEqual(shape(viaSdk));
    // Custody stores attributes as JSON: the same JSON from both clients.
    expect(JSON.stringify(viaWire.MessageAttributes)).toBe(JSON.stringify(viaSdk.MessageAttributes));
  });

  it('changes visibility (single and batch) and deletes one message', async () => {
    const q = await newQueue();
    await wire.sendMessageBatch({ QueueUrl: q, Entries: [{ Id: 'a', MessageBody: 'one' }, { Id: 'b', MessageBody: 'two' }] });
    const first = (await wire.receiveMessage({ QueueUrl: q, MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).Messages!;
    expect(first).toHaveLength(2);
    // Both back at once: one by ChangeMessageVisibility, one by the batch call.
    await wire.changeMessageVisibility({ QueueUrl: q, ReceiptHandle: first[0]!.ReceiptHandle!, VisibilityTimeout: 0 });
    const batch = await wire.changeMessageVisibilityBatch({ QueueUrl: q, Entries: [{ Id: 'p0', ReceiptHandle: first[1]!.ReceiptHandle!, VisibilityTimeout: 0 }] });
    expect(batch.Successful).toEqual([{ Id: 'p0' }]);
    const again = (await wire.receiveMessage({ QueueUrl: q, MaxNumberOfMessages: 10, VisibilityTimeout: 600 })).Messages!;
    expect(again.map((m) => m.Body).sort()).toEqual(['one', 'two']);
    for (const m of again) await wire.deleteMessage({ QueueUrl: q, ReceiptHandle: m.ReceiptHandle! });
    expect((await wire.receiveMessage({ QueueUrl: q, MaxNumberOfMessages: 10 })).Messages ?? []).toEqual([]);
  });

  it('reports per-entry failures of a batch, as SQS sends them', async () => {
    const q = (await sdk.send(new CreateQueueCommand({ QueueName: `wire-${process.pid}-${++n}.fifo`, Attributes: { FifoQueue: 'true' } }))).QueueUrl!;
    // On a FIFO queue an entry without a message group is refused on its own; the other entry is sent.
    const r = await wire.sendMessageBatch({
      QueueUrl: q,
      Entries: [
        { Id: 'ok', MessageBody: 'fine', MessageGroupId: 'g', MessageDeduplicationId: 'd1' },
        { Id: 'bad', MessageBody: 'no group', MessageDeduplicationId: 'd2' },
      ],
    });
    expect(r.Successful!.map((e) => e.Id)).toEqual(['ok']);
    expect(r.Failed).toEqual([{ Id: 'bad', SenderFault: true, Code: 'MissingParameter', Message: expect.stringMatching(/MessageGroupId/) }]);
  });

  it('names a missing queue as the SDK does: QueueDoesNotExist, a config error for agentq', async () => {
    const q = await newQueue();
    await sdk.send(new DeleteQueueCommand({ QueueUrl: q }));
    let err: unknown;
    try {
      await wire.receiveMessage({ QueueUrl: q, MaxNumberOfMessages: 1 });
    } catch (e) {
      err = e;
    }
    expect((err as Error).name).toBe('QueueDoesNotExist');
    expect(isQueueMissing(err)).toBe(true);
    const ae = toAgentqError(err, 'ReceiveMessage');
    expect(ae).toBeInstanceOf(ConfigError);
    expect(ae.exitCode).toBe(78);
    // The SDK names it the same way (one error path for both clients).
    const viaSdk = await sdk.send(new ReceiveMessageCommand({ QueueUrl: q })).catch((e: Error) => e);
    expect((viaSdk as Error).name).toBe((err as Error).name);
  });
});

// ---------------------------------------------------------------- a local server that misbehaves on purpose

type Handler = (req: IncomingMessage & { body: string }, res: ServerResponse) => void;

async function localServer(handler: Handler): Promise<{ server: Server; endpoint: string; requests: Array<IncomingMessage & { body: string }> }> {
  const requests: Array<IncomingMessage & { body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString('utf8')));
    req.on('end', () => {
      const r = Object.assign(req, { body });
      requests.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.0', ...headers });
  res.end(JSON.stringify(body));
};
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');
const noSleep = { sleep: async () => {}, random: () => 0.5 };

describe('wire client: errors, retries, checksums, credentials and endpoint', () => {
  const sdk = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'AK', secretAccessKey: 'SK', sessionToken: 'TOKEN' } });
  afterAll(() => sdk.destroy());

  it('detects a received body whose MD5 is not the one SQS reports', async () => {
    const { server, endpoint } = await localServer((_req, res) =>
      json(res, 200, { Messages: [{ MessageId: 'm-1', ReceiptHandle: 'r', Body: 'the body', MD5OfBody: md5('another body') }] }),
    );
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint });
    const err = await wire.receiveMessage({ QueueUrl: `${endpoint}/1/q` }).catch((e: Error) => e);
    expect((err as Error).name).toBe('InvalidChecksumError');
    expect((err as Error).message).toMatch(/m-1/);
    wire.destroy();
    server.close();
  });

  it('detects a sent body whose MD5 SQS reports differently', async () => {
    const { server, endpoint } = await localServer((req, res) => {
      const input = JSON.parse(req.body) as { Entries: Array<{ Id: string; MessageBody: string }> };
      json(res, 200, { Successful: input.Entries.map((e, i) => ({ Id: e.Id, MessageId: `id-${i}`, MD5OfMessageBody: i === 1 ? md5('tampered') : md5(e.MessageBody) })) });
    });
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint });
    const err = await wire.sendMessageBatch({ QueueUrl: `${endpoint}/1/q`, Entries: [{ Id: 'a', MessageBody: 'one' }, { Id: 'b', MessageBody: 'two' }] }).catch((e: Error) => e);
    expect((err as Error).name).toBe('InvalidChecksumError');
    expect((err as Error).message).toMatch(/id-1/);
    expect((err as Error).message).not.toMatch(/id-0/);
    wire.destroy();
    server.close();
  });

  it('sends the JSON protocol headers and the session token, signed for the region', async () => {
    const { server, endpoint, requests } = await localServer((_req, res) => json(res, 200, {}));
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint });
    await wire.deleteMessage({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' });
    const h = requests[0]!.headers;
    expect(requests[0]!.method).toBe('POST');
    expect(requests[0]!.url).toBe('/');
    expect(h['content-type']).toBe('application/x-amz-json-1.0');
    expect(h['x-amz-target']).toBe('AmazonSQS.DeleteMessage');
    expect(h['x-amz-security-token']).toBe('TOKEN');
    expect(h.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AK\/\d{8}\/eu-west-1\/sqs\/aws4_request, SignedHeaders=.*x-amz-security-token.*, Signature=[0-9a-f]{64}$/);
    expect(JSON.parse(requests[0]!.body)).toEqual({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' });
    wire.destroy();
    server.close();
  });

  it('retries 5xx and throttling with backoff, at most 3 attempts, then gives up with the AWS error name', async () => {
    let calls = 0;
    const { server, endpoint } = await localServer((_req, res) => {
      calls++;
      if (calls === 1) json(res, 503, { __type: 'com.amazonaws.sqs#ServiceUnavailable', message: 'busy' });
      else if (calls === 2) json(res, 400, { __type: 'com.amazonaws.sqs#ThrottlingException', message: 'slow down' });
      else if (calls === 3) json(res, 200, { Successful: [{ Id: 'd0' }] });
      else json(res, 400, { __type: 'com.amazonaws.sqs#RequestThrottled', message: 'slow down' }, { 'x-amzn-query-error': 'AWS.SimpleQueueService.RequestThrottled;Sender' });
    });
    const pauses: number[] = [];
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint, sleep: async (ms) => void pauses.push(ms), random: () => 0.5 });
    const ok = await wire.deleteMessageBatch({ QueueUrl: `${endpoint}/1/q`, Entries: [{ Id: 'd0', ReceiptHandle: 'r' }] });
    expect(ok.Successful).toEqual([{ Id: 'd0' }]);
    expect(calls).toBe(3);
    // Full jitter (random 0.5) over 100 ms for a 5xx, then 2 x 500 ms for throttling.
    expect(pauses).toEqual([50, 500]);
    const err = await wire.deleteMessageBatch({ QueueUrl: `${endpoint}/1/q`, Entries: [{ Id: 'd0', ReceiptHandle: 'r' }] }).catch((e: Error) => e);
    expect(calls).toBe(6);
    expect((err as Error).name).toBe('RequestThrottled');
    expect((err as unknown as { Code: string }).Code).toBe('AWS.SimpleQueueService.RequestThrottled');
    expect(toAgentqError(err, 'DeleteMessageBatch')).toBeInstanceOf(RetryLaterError);
    wire.destroy();
    server.close();
  });

  it('does not retry a client error', async () => {
    let calls = 0;
    const { server, endpoint } = await localServer((_req, res) => {
      calls++;
      json(res, 400, { __type: 'com.amazonaws.sqs#ReceiptHandleIsInvalid', message: 'bad receipt' }, { 'x-amzn-query-error': 'ReceiptHandleIsInvalid;Sender' });
    });
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint, ...noSleep });
    const err = await wire.changeMessageVisibility({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'x', VisibilityTimeout: 0 }).catch((e: Error) => e);
    expect(calls).toBe(1);
    expect(err).toMatchObject({ name: 'ReceiptHandleIsInvalid', message: 'bad receipt', $fault: 'client', $metadata: { httpStatusCode: 400 } });
    wire.destroy();
    server.close();
  });

  it('retries a refused connection, then reports it as a connection error (retry later)', async () => {
    const port = await freePort();
    let sleeps = 0;
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint: `http://127.0.0.1:${port}`, sleep: async () => void sleeps++ });
    const err = await wire.receiveMessage({ QueueUrl: `http://127.0.0.1:${port}/1/q` }).catch((e: Error) => e);
    expect(sleeps).toBe(2);
    expect(isConnectionError(err)).toBe(true);
    expect(toAgentqError(err, 'ReceiveMessage')).toBeInstanceOf(RetryLaterError);
    wire.destroy();
  });

  it('times out a request SQS never answers', async () => {
    const { server, endpoint } = await localServer(() => {
      /* never answers */
    });
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint, socketTimeoutMs: 200, maxAttempts: 1 });
    const err = await wire.deleteMessage({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' }).catch((e: Error) => e);
    expect((err as Error).name).toBe('TimeoutError');
    expect(isConnectionError(err)).toBe(true);
    wire.destroy();
    server.closeAllConnections();
    server.close();
  });

  it('parses an error without a JSON body from the query error header', () => {
    const e = parseWireError(400, { 'x-amzn-query-error': 'AWS.SimpleQueueService.NonExistentQueue;Sender' }, '<html>');
    expect(e.name).toBe('AWS.SimpleQueueService.NonExistentQueue');
    expect(isQueueMissing(e)).toBe(true);
    expect(parseWireError(400, {}, '{"__type":"QueueDoesNotExist:http://internal.amazon.com/","message":"m"}').name).toBe('QueueDoesNotExist');
  });

  it("takes credentials from the SDK client's chain and resolves them again when they are about to expire", async () => {
    const { server, endpoint, requests } = await localServer((_req, res) => json(res, 200, {}));
    let resolved = 0;
    const soon = new SQSClient({
      region: 'eu-west-1',
      endpoint,
      credentials: async () => ({ accessKeyId: `AK${++resolved}`, secretAccessKey: 'SK', expiration: new Date(Date.now() + 60_000) }),
    });
    const wire = new SqsWireClient(soon, { region: 'eu-west-1', endpoint });
    await wire.deleteMessage({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' });
    await wire.deleteMessage({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' });
    // Within 5 minutes of expiry: asked again for each call (the SDK's provider refreshes them).
    const keys = requests.map((r) => /Credential=(\w+)\//.exec(r.headers.authorization!)![1]);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys[1]).toBe(`AK${resolved}`);
    let far = 0;
    const lasting = new SQSClient({ region: 'eu-west-1', endpoint, credentials: async () => ({ accessKeyId: `L${++far}`, secretAccessKey: 'SK', expiration: new Date(Date.now() + 3600_000) }) });
    const wire2 = new SqsWireClient(lasting, { region: 'eu-west-1', endpoint });
    await wire2.deleteMessage({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' });
    const once = far;
    await wire2.deleteMessage({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' });
    await wire2.deleteMessage({ QueueUrl: `${endpoint}/1/q`, ReceiptHandle: 'r' });
    expect(far).toBe(once);
    for (const c of [wire, wire2]) c.destroy();
    for (const c of [soon, lasting]) c.destroy();
    server.close();
  });

  it("without endpoint=, sends to the SDK's regional endpoint, or to the queue URL's host when it differs (as the SDK does)", async () => {
    const { server, endpoint, requests } = await localServer((_req, res) => json(res, 200, {}));
    const wire = new SqsWireClient(sdk, { region: 'eu-west-1', endpoint: null });
    const target = (q: string) => (wire as unknown as { target(q: string): Promise<{ protocol: string; host: string }> }).target(q);
    expect(await target('https://sqs.eu-west-1.amazonaws.com/123456789012/q')).toMatchObject({ protocol: 'https:', host: 'sqs.eu-west-1.amazonaws.com' });
    const cn = new SQSClient({ region: 'cn-north-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    const wireCn = new SqsWireClient(cn, { region: 'cn-north-1', endpoint: null });
    expect(await (wireCn as unknown as { target(q: string): Promise<{ host: string }> }).target('not a url')).toMatchObject({ host: 'sqs.cn-north-1.amazonaws.com.cn' });
    await wire.deleteMessage({ QueueUrl: `${endpoint}/123/q`, ReceiptHandle: 'r' });
    expect(requests[0]!.headers.host).toBe(endpoint.replace('http://', ''));
    for (const c of [wire, wireCn]) c.destroy();
    cn.destroy();
    server.close();
  });
});
