import assert from "node:assert/strict";
import { test } from "node:test";
import Fastify from "fastify";
import { ChatServe } from "../../src/app/chat-serve.js";
import { GraphRegistry } from "../../src/registry/graph-registry.js";
import { echoGraph } from "../fixtures/graphs.js";

const registry = () => new GraphRegistry({ echo: { graph: echoGraph, description: "Echo" } });

test("API docs are off by default", async () => {
  const app = await new ChatServe({ graphs: registry() }).bind();
  for (const path of ["/v1/docs", "/v1/redoc", "/v1/openapi.json"]) {
    const response = await app.inject(path);
    assert.equal(response.statusCode, 404, path);
    assert.equal(response.json().error.code, "unknown_url");
  }
  await app.close();
});

test("with docs enabled, /docs, /redoc and /openapi.json describe the mounted app only", async () => {
  const host = Fastify();
  host.get("/host-only", async () => ({}));
  const app = await new ChatServe({ app: host, graphs: registry() }).bind({ docs: true });
  await app.ready();
  const spec = (await app.inject("/v1/openapi.json")).json();
  assert.ok(spec.openapi.startsWith("3."));
  const paths = Object.keys(spec.paths);
  assert.ok(paths.includes("/chat/completions"), paths.join(","));
  assert.ok(paths.includes("/models/{model}"), paths.join(","));
  assert.ok(!paths.some((path) => path.includes("host-only")));
  const body = spec.paths["/chat/completions"].post.requestBody.content["application/json"].schema;
  assert.ok(body.properties.model && body.properties.messages, "the request body is documented");
  assert.equal((await app.inject("/v1/docs")).statusCode < 400, true);
  const redoc = await app.inject("/v1/redoc");
  assert.equal(redoc.statusCode, 200);
  // Its links are relative to the page, so that they hold under a host's mount path too.
  const page = "http://host/v1/redoc";
  assert.equal(new URL(/spec-url="([^"]+)"/u.exec(redoc.body)![1]!, page).pathname, "/v1/openapi.json");
  // Redoc comes from its package, never a CDN.
  const scripts = [...redoc.body.matchAll(/src="([^"]+)"/gu)].map((match) => new URL(match[1]!, page).pathname);
  assert.deepEqual(scripts, ["/v1/redoc/redoc.standalone.js"]);
  const bundle = await app.inject(scripts[0]!);
  assert.equal(bundle.statusCode, 200);
  assert.match(bundle.headers["content-type"] as string, /javascript/u);
  assert.ok(bundle.body.length > 100_000, "the standalone bundle");
  await app.close();
});

test("SVC_CHAT_API_DOCS_ENABLED=true turns the docs on", async () => {
  process.env.SVC_CHAT_API_DOCS_ENABLED = "true";
  try {
    const app = await new ChatServe({ graphs: registry() }).bind();
    assert.equal((await app.inject("/v1/openapi.json")).statusCode, 200);
    await app.close();
  } finally {
    delete process.env.SVC_CHAT_API_DOCS_ENABLED;
  }
});

test("the docs page loads every asset it names, with and without a trailing slash", async () => {
  const app = await new ChatServe({ graphs: registry() }).bind({ docs: true });
  await app.ready();
  try {
    for (const page of ["/v1/docs", "/v1/docs/"]) {
      const html = await app.inject(page);
      assert.equal(html.statusCode, 200, page);
      const assets = [...html.body.matchAll(/(?:src|href)="([^"]+)"/gu)].map((match) => match[1]!);
      assert.ok(assets.length >= 4, `${page} names its assets`);
      for (const asset of assets) {
        const url = new URL(asset, `http://host${page}`);
        const response = await app.inject(url.pathname);
        assert.equal(response.statusCode, 200, `${page} -> ${asset} (${url.pathname})`);
      }
    }
  } finally {
    await app.close();
  }
});

test("the documented request bodies offer the real models, with a working example", async () => {
  const app = await new ChatServe({ graphs: registry() }).bind({ docs: true });
  await app.ready();
  try {
    const spec = (await app.inject("/v1/openapi.json")).json();
    for (const path of ["/chat/completions", "/responses"]) {
      const body = spec.paths[path].post.requestBody.content["application/json"].schema;
      assert.deepEqual(body.properties.model.enum, ["echo"], path);
      assert.equal(body.example.model, "echo");
      const sent = await app.inject({ method: "POST", url: `/v1${path}`, payload: body.example });
      assert.equal(sent.statusCode, 200, `${path}: the example works as sent (${sent.body})`);
    }
  } finally {
    await app.close();
  }
});
