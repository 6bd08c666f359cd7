import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { echoGraph } from "../fixtures/graphs.js";
import { assertMatchesOpenAI } from "../helpers/openai-schema.js";
import { buildTestApp } from "../helpers/server.js";

const graphs = () => ({ echo: { graph: echoGraph(), description: "Echo" } });

describe("the playground, when on", () => {
  let app: FastifyInstance;
  before(async () => {
    ({ app } = await buildTestApp(graphs(), { playground: true, prefix: "/api/v1" }));
  });
  after(() => app.close());

  test("the page answers with and without a trailing slash, its asset URLs carry the prefix, and it may load nothing from elsewhere", async () => {
    for (const url of ["/api/v1/playground", "/api/v1/playground/"]) {
      const response = await app.inject({ method: "GET", url });
      assert.equal(response.statusCode, 200, url);
      assert.match(response.headers["content-type"] as string, /^text\/html/u);
      const policy = response.headers["content-security-policy"] as string;
      assert.match(policy, /default-src 'self'/u);
      assert.match(policy, /script-src 'self'(;|$)/u, "no inline script, no other origin");
      assert.match(response.body, /data-api="\/api\/v1"/u);
      const assets = [...response.body.matchAll(/(?:src|href)="([^"]+)"/gu)].map((match) => match[1]!).filter((url) => url !== "data:,");
      assert.ok(assets.length >= 3, response.body);
      for (const asset of assets) assert.ok(asset.startsWith("/api/v1/"), `${asset} is served here`);
    }
  });

  test("its script and stylesheet are served with their types; nothing else in the folder is", async () => {
    const script = await app.inject({ method: "GET", url: "/api/v1/playground/assets/playground.js" });
    assert.equal(script.statusCode, 200);
    assert.match(script.headers["content-type"] as string, /javascript/u);
    assert.match(script.body, /chat\/completions/u);
    assert.doesNotMatch(script.body, /https?:\/\/(?!localhost)/u, "the script talks to this server only");
    const style = await app.inject({ method: "GET", url: "/api/v1/playground/assets/playground.css" });
    assert.equal(style.statusCode, 200);
    assert.match(style.headers["content-type"] as string, /text\/css/u);
    assert.doesNotMatch(style.body, /url\(\s*["']?https?:/u, "no fonts or images from elsewhere");
    for (const url of ["/api/v1/playground/assets/index.html", "/api/v1/playground/assets/../package.json", "/api/v1/playground/assets/"]) {
      const response = await app.inject({ method: "GET", url });
      assert.equal(response.statusCode, 404, url);
      assertMatchesOpenAI("ErrorResponse", response.json());
    }
  });

  test("a model's graph, for the diagram: LangGraph's Mermaid drawing and the renderer served here; an unknown model is a 404", async () => {
    const graph = await app.inject({ method: "GET", url: "/api/v1/playground/graph/echo" });
    assert.equal(graph.statusCode, 200);
    assert.equal(graph.json().model, "echo");
    assert.match(graph.json().mermaid, /__start__ --> respond;/u);
    assert.equal(graph.json().renderer, "/api/v1/playground/mermaid.min.js");
    const renderer = await app.inject({ method: "GET", url: "/api/v1/playground/mermaid.min.js" });
    assert.equal(renderer.statusCode, 200);
    assert.match(renderer.headers["content-type"] as string, /javascript/u);
    const unknown = await app.inject({ method: "GET", url: "/api/v1/playground/graph/nope" });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().error.code, "model_not_found");
  });

  test("GET / points to the playground: a page for a browser, JSON for a client", async () => {
    const json = await app.inject({ method: "GET", url: "/" });
    assert.equal(json.json().playground, "/api/v1/playground");
    assert.match(json.json().message, /Try the models in a browser at \/api\/v1\/playground\./u);
    const page = await app.inject({ method: "GET", url: "/", headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
    assert.match(page.headers["content-type"] as string, /^text\/html/u);
    assert.match(page.body, /href="\/api\/v1\/playground"/u);
    assert.match(page.body, /href="\/api\/v1\/models"/u);
  });
});

test("the playground is off unless asked for", async () => {
  const { app } = await buildTestApp(graphs());
  try {
    const response = await app.inject({ method: "GET", url: "/v1/playground" });
    assert.equal(response.statusCode, 404);
    assertMatchesOpenAI("ErrorResponse", response.json());
    assert.equal((await app.inject({ method: "GET", url: "/" })).json().playground, undefined);
  } finally {
    await app.close();
  }
});
