import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, test } from "node:test";
import { checkRunWebhook, RunWebhooks } from "../../src/background/run-webhooks.js";
import { refusedHost } from "../../src/background/webhook-addresses.js";
import type { AgentRunRecord } from "../../src/store/agent-records.js";
import { eventually } from "../helpers/eventually.js";
import { startReceiver } from "../helpers/loopback-receiver.js";

// No run webhook reaches a cloud metadata service, however its address is spelled, whatever
// name resolves to it, before or at delivery; a redirect is never followed; each delivery carries
// Standard Webhooks' id and timestamp, and a signature when the deployment has a secret.

/** A resolver as DNS would answer, from a table (names not in it do not resolve). */
const resolver = (table: Record<string, string[]>) => async (hostname: string) => {
  const addresses = table[hostname];
  if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
  return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

const refusalOf = async (url: string, resolve = resolver({})) =>
  checkRunWebhook(url, {}, false, resolve).then(
    () => undefined,
    (error: Error) => error.message,
  );

const run = (overrides: Partial<AgentRunRecord> = {}): AgentRunRecord => ({
  run_id: "1f0c7a52-0000-7000-8000-000000000001",
  thread_id: "1f0c7a52-0000-7000-8000-0000000000aa",
  assistant_id: "echo",
  scope: "tenant",
  created_at: "2026-12-07T10:00:00.000Z",
  updated_at: "2026-12-07T10:00:02.000Z",
  status: "success",
  metadata: {},
  multitask_strategy: "reject",
  temporary: false,
  ...overrides,
});

describe("webhook destinations", () => {
  test("every spelling of a metadata address is refused, as a name too; ordinary hosts are not", async () => {
    for (const url of [
      "http://169.254.169.254/latest",
      "http://2852039166/",
      "http://0xa9fea9fe/",
      "http://0251.0376.0251.0376/",
      "http://[::ffff:169.254.169.254]/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://[0:0:0:0:0:ffff:a9fe:a9fe]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[2002:a9fe:a9fe::1]/",
      "http://[fe80::1]/",
      "http://[fd00:ec2::254]/",
      "http://100.100.100.200/",
      "http://metadata.google.internal/computeMetadata/v1/",
      "http://METADATA.GOOGLE.INTERNAL./",
    ]) {
      assert.match(String(await refusalOf(url)), /^webhook: .*(cloud metadata|link-local).*, which no webhook may reach\.$/u, url);
    }
    for (const host of ["127.0.0.1", "[::1]", "10.0.0.7", "example.com", "[2001:db8::1]", "100.100.100.201"]) {
      assert.equal(refusedHost(host), undefined, host);
    }
  });

  test("a name that resolves to a metadata address is refused when the run is made", async () => {
    const resolve = resolver({ "169.254.169.254.nip.io": ["169.254.169.254"], "sneaky.test": ["127.0.0.1", "::ffff:169.254.169.254"] });
    assert.equal(
      await refusalOf("http://169.254.169.254.nip.io/", resolve),
      "webhook: 169.254.169.254.nip.io resolves to 169.254.169.254, a cloud metadata or link-local address, which no webhook may reach.",
    );
    assert.match(String(await refusalOf("https://sneaky.test/hook", resolve)), /sneaky\.test resolves to ::ffff:169\.254\.169\.254/u);
    // A name that does not resolve now is left to the delivery, which checks it again.
    assert.equal(await refusalOf("https://not-yet.test/hook", resolve), undefined);
  });

  test("at delivery: a name that now resolves to a metadata address is not connected to; one that resolves elsewhere is", async () => {
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    const logged: string[] = [];
    const log = { warn: (_: object, message: string) => logged.push(message), error: (_: object, message: string) => logged.push(message) };
    const webhooks = new RunWebhooks({}, () => null, log, resolver({ "hooks.test": ["127.0.0.1"], "rebound.test": ["169.254.169.254"] }));
    try {
      webhooks.send(`http://rebound.test:${port}/a`, run(), { messages: [] });
      await eventually(async () => assert.equal(webhooks.pending, 0), 5_000);
      assert.deepEqual(logged, ["a webhook could not be delivered; giving up"], "refused once, never retried");
      assert.equal(receiver.requests.length, 0);

      webhooks.send(`http://hooks.test:${port}/b`, run(), { messages: [] }, "2026-12-07T10:00:01.000Z");
      await eventually(async () => assert.equal(receiver.requests.length, 1), 5_000);
      const [delivered] = receiver.requests;
      assert.equal(delivered?.headers.host, `hooks.test:${port}`);
      assert.equal(delivered?.headers["webhook-id"], run().run_id, "the run's id: the same on every retry");
      assert.match(String(delivered?.headers["webhook-timestamp"]), /^\d{10}$/u);
      assert.equal(delivered?.headers["webhook-signature"], undefined, "unsigned without a secret");
      const body = JSON.parse(delivered!.body) as Record<string, unknown>;
      assert.equal(body.run_started_at, "2026-12-07T10:00:01.000Z");
      assert.equal(body.run_ended_at, "2026-12-07T10:00:02.000Z");
    } finally {
      webhooks.close();
      await receiver.close();
    }
  });

  test("a redirect is not followed, and not tried again; a secret signs each delivery", async () => {
    const elsewhere = await startReceiver();
    const { createServer } = await import("node:http");
    let redirected = 0;
    const redirecting = createServer((_request, response) => {
      redirected += 1;
      response.writeHead(307, { location: `${elsewhere.url}/stolen` }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
    const address = redirecting.address() as { port: number };
    const secret = `whsec_${Buffer.from("a secret of 32 bytes for the hmac").toString("base64")}`;
    const webhooks = new RunWebhooks({ secret }, () => null);
    try {
      webhooks.send(`http://127.0.0.1:${address.port}/hook`, run(), null);
      await eventually(async () => assert.equal(webhooks.pending, 0), 5_000);
      assert.equal(redirected, 1);
      assert.equal(elsewhere.requests.length, 0, "the Location is never POSTed to");

      webhooks.send(`${elsewhere.url}/signed`, run(), null);
      await eventually(async () => assert.equal(elsewhere.requests.length, 1), 5_000);
      const [signed] = elsewhere.requests;
      const id = String(signed?.headers["webhook-id"]);
      const timestamp = String(signed?.headers["webhook-timestamp"]);
      const key = Buffer.from(secret.slice("whsec_".length), "base64");
      const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${signed?.body}`).digest("base64");
      assert.equal(signed?.headers["webhook-signature"], `v1,${expected}`);
    } finally {
      webhooks.close();
      redirecting.close();
      await elsewhere.close();
    }
  });
});
