import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import { graph as echo } from "../../demo/graphs/echo.js";
import { type Backends, backendsFromConfig } from "../../src/server/backends.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { dropSchema, POSTGRES_URL, requirePostgres, uniqueSchema } from "../helpers/services.js";

// LangGraph's PostgresStore matches a namespace prefix as text (`LIKE 'prefix%'`): tenant `acme`
// once read tenant `acme-eu`'s items, `team1` read `team10`'s. With the store behind whole-label
// matching and tenant labels escaped, each tenant sees its own items only, on every store route.

const { skip } = await requirePostgres();
const schema = uniqueSchema();
let backends: Backends;
let server: TestServer;

const KEYS = {
  acme: "acme-key-0123456789abcdef",
  "acme-eu": "acme-eu-key-0123456789abcdef",
  team1: "team1-key-0123456789abcdef",
  team10: "team10-key-0123456789abcdef",
  team_1: "team-underscore-key-0123456789",
  teamX1: "team-x-key-0123456789abcdef",
} as const;
type Tenant = keyof typeof KEYS;
const client = (tenant: Tenant) => new Client({ apiUrl: server.origin, apiKey: KEYS[tenant] });

before(async () => {
  if (skip) return;
  backends = await backendsFromConfig({
    checkpointer: { kind: "postgres", url: POSTGRES_URL, schema },
    coordinator: { kind: "memory" },
  } as never);
  await backends.setup();
  server = await startTestServer(
    { echo: { graph: echo, description: "Echo" } },
    { langgraph: true, auth: { keys: Object.entries(KEYS).map(([tenant, key]) => ({ key, tenant })) } },
    { graphStore: backends.graphStore },
  );
});
after(async () => {
  if (skip) return;
  await server.close();
  await backends.close();
  await dropSchema(schema);
});

describe("store items of tenants whose names share a prefix, on Postgres", { skip }, () => {
  test("search and namespace listing show a tenant its own items only", async () => {
    for (const tenant of Object.keys(KEYS) as Tenant[]) {
      await client(tenant).store.putItem(["notes"], "owner", { tenant });
      await client(tenant).store.putItem(["notes", "deep"], "owner", { tenant });
    }
    for (const tenant of Object.keys(KEYS) as Tenant[]) {
      const all = await client(tenant).store.searchItems([], { limit: 50 });
      assert.deepEqual(all.items.map((item) => `${item.namespace.join(".")}: ${item.value.tenant}`).sort(), [
        `notes.deep: ${tenant}`,
        `notes: ${tenant}`,
      ]);
      const listed = await client(tenant).store.listNamespaces({ limit: 50 });
      assert.deepEqual(listed.namespaces.map((labels) => labels.join(".")).sort(), ["notes", "notes.deep"], tenant);
      assert.equal((await client(tenant).store.getItem(["notes"], "owner"))?.value.tenant, tenant);
    }
  });

  test("a prefix matches whole labels within a tenant too, and paging counts only what matches", async () => {
    const acme = client("acme");
    await acme.store.putItem(["notes2"], "other", { n: 0 });
    for (let n = 0; n < 5; n += 1) await acme.store.putItem(["notes"], `page-${n}`, { n });
    const notes = await acme.store.searchItems(["notes"], { limit: 50 });
    assert.ok(
      notes.items.every((item) => item.namespace[0] === "notes"),
      JSON.stringify(notes.items.map((item) => item.namespace)),
    );
    assert.equal(notes.items.length, 7); // two `owner` items and five pages
    const pages: string[] = [];
    for (let offset = 0; offset < 8; offset += 3) {
      const page = await acme.store.searchItems(["notes"], { limit: 3, offset });
      pages.push(...page.items.map((item) => `${item.namespace.join(".")}/${item.key}`));
    }
    assert.equal(new Set(pages).size, 7, pages.join(", "));
  });

  test("a label with a LIKE wildcard is refused with 422, never a wider match", async () => {
    const response = await fetch(`${server.origin}/store/items/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": KEYS.acme },
      body: JSON.stringify({ namespace_prefix: ["note%"] }),
    });
    assert.equal(response.status, 422);
    assert.match(((await response.json()) as { detail: string }).detail, /note%/);
  });
});
