import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { demoGraphs } from "../helpers/demo-graphs.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

// Bad input a fuzzer found answered with 500s or the framework's raw body: each is a 4xx in
// its surface's shape, with an x-request-id.

let server: TestServer;
let threadId: string;

before(async () => {
  server = await startTestServer(demoGraphs(), { langgraph: true, anthropic: true });
  const thread = (await (await post("/threads", {})).json()) as { thread_id: string };
  threadId = thread.thread_id;
  await post(`/threads/${threadId}/runs/wait`, { assistant_id: "echo", input: { messages: [{ role: "user", content: "hi" }] } });
});
after(() => server.close());

function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${server.origin}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

async function expectDetail(response: Response, status: number, pattern: RegExp) {
  const text = await response.text();
  assert.equal(response.status, status, text);
  assert.ok(response.headers.get("x-request-id"), "an x-request-id");
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ["detail"], text);
  assert.match(String(body.detail), pattern);
}

/** One raw HTTP request; the status line, whether it had an x-request-id, and the body. */
async function raw(request: string): Promise<{ status: string; requestId: boolean; body: string }> {
  const socket = net.connect(Number(new URL(server.origin).port), "127.0.0.1");
  socket.write(request);
  let text = "";
  socket.on("data", (chunk) => {
    text += chunk;
  });
  await new Promise((resolve) => socket.once("close", resolve));
  const [head = "", body = ""] = text.split("\r\n\r\n");
  return { status: head.split("\r\n")[0] ?? "", requestId: /\r\nx-request-id: /iu.test(head), body };
}

describe("bad input answers", () => {
  test("a checkpoint id no saver makes (__proto__, constructor) is no checkpoint on every thread route", async () => {
    for (const id of ["__proto__", "constructor"]) {
      await expectDetail(await fetch(`${server.origin}/threads/${threadId}/state/${id}`), 404, /No checkpoint/u);
      await expectDetail(await post(`/threads/${threadId}/state/checkpoint`, { checkpoint: { checkpoint_id: id } }), 404, /No checkpoint/u);
      await expectDetail(await post(`/threads/${threadId}/state`, { values: {}, checkpoint_id: id }), 404, /No checkpoint/u);
      await expectDetail(await post(`/threads/${threadId}/history`, { before: id }), 404, /No checkpoint/u);
      await expectDetail(
        await post(`/threads/${threadId}/runs/wait`, { assistant_id: "echo", input: null, checkpoint: { checkpoint_ns: id } }),
        404,
        /No checkpoint/u,
      );
    }
  });

  test("a channel every object has (constructor, __defineGetter__) is refused before it reaches the state", async () => {
    // A write to one once left the thread's state unreadable: every later GET /state was a 500.
    const update = { assistant_id: "echo", input: {}, command: { update: { __defineGetter__: "x" } } };
    await expectDetail(await post(`/threads/${threadId}/runs/wait`, update), 422, /channel '__defineGetter__'/u);
    await expectDetail(
      await post(`/threads/${threadId}/runs/wait`, { assistant_id: "echo", command: { update: [["constructor", 1]] } }),
      422,
      /'constructor'/u,
    );
    await expectDetail(await post(`/threads/${threadId}/state`, { values: { toString: "x" } }), 422, /'toString'/u);
    await expectDetail(await post("/runs/wait", { assistant_id: "echo", input: { hasOwnProperty: 1 } }), 422, /'hasOwnProperty'/u);
    assert.equal((await fetch(`${server.origin}/threads/${threadId}/state`)).status, 200);
  });

  test("a repeated namespace query parameter is a 422 saying how to give it", async () => {
    await expectDetail(await fetch(`${server.origin}/store/items?namespace=a&namespace=b&key=k`), 422, /namespace=a\.b/u);
  });

  test("a message whose content is neither a string nor a list is a 422 before the graph runs", async () => {
    for (const content of [5, { text: "hi" }, true]) {
      await expectDetail(
        await post("/runs/wait", { assistant_id: "echo", input: { messages: [{ role: "user", content }] } }),
        422,
        /input\.messages\.0\.content must be a string or a list/u,
      );
    }
  });

  test("a null message or a content block that is no block is a 422 before any run starts, on a stream too", async () => {
    await expectDetail(
      await post("/runs/wait", { assistant_id: "echo", input: { messages: [{ role: "user", content: "hi" }, null] } }),
      422,
      /^input\.messages\.1 must be a message: an object with a role/u,
    );
    for (const content of [[null], [42], [{}], [{ type: "text" }], [{ type: "text", text: 5 }]]) {
      const streamed = await post("/runs/stream", { assistant_id: "echo", input: { messages: [{ role: "user", content }] } });
      await expectDetail(streamed, 422, /^input\.messages\.0\.content\.0(\.text)? must be a/u);
    }
    // What a model reads (a block of a type chat-serve does not know, a plain string) still runs.
    const image = await post("/runs/wait", {
      assistant_id: "echo",
      input: { messages: [{ role: "user", content: [{ type: "text", text: "hi" }, "there"] }] },
    });
    assert.equal(image.status, 200);
  });

  test("as_node naming what every object has is a 422; a client-made assistant's run with context null runs", async () => {
    for (const asNode of ["constructor", "__proto__", "toString", "hasOwnProperty", "no-such-node"]) {
      await expectDetail(
        await post(`/threads/${threadId}/state`, { values: { messages: [] }, as_node: asNode }),
        422,
        /^as_node: the graph has no node/u,
      );
    }
    assert.equal((await post(`/threads/${threadId}/state`, { values: { messages: [] }, as_node: "respond" })).status, 200);
    const assistant = (await (await post("/assistants", { graph_id: "echo", context: { tone: "dry" } })).json()) as {
      assistant_id: string;
    };
    const run = await post("/runs/wait", {
      assistant_id: assistant.assistant_id,
      context: null,
      input: { messages: [{ role: "user", content: "with no context" }] },
    });
    assert.equal(run.status, 200, await run.clone().text());
    assert.match(await run.text(), /with no context/u);
  });

  test("a JSON body that does not parse, to a path no route has, is answered in shape with an x-request-id", async () => {
    for (const body of ["", "{"]) {
      const response = await post("/nowhere", body);
      assert.equal(response.status, 400);
      assert.ok(response.headers.get("x-request-id"));
      assert.doesNotMatch(await response.text(), /FST_ERR/u);
    }
  });

  test("malformed JSON sent with a method a path does not take is that path's 405, in its shape: the body is never read", async () => {
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
        const answer = await fetch(`${server.origin}${path}`, { method, headers: { "content-type": "application/json" }, body: "{bad" });
        assert.equal(answer.status, 405);
        assert.equal(answer.headers.get("allow"), "POST");
        const body = (await answer.json()) as { type: string; error: { type: string; message: string } };
        assert.equal(body.type, "error", "Anthropic's envelope");
        assert.equal(body.error.message, `${path} does not accept ${method}; use POST.`);
      }
    }
    const openai = await fetch(`${server.origin}/v1/chat/completions`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: "{bad",
    });
    assert.equal(openai.status, 405);
    assert.equal(((await openai.json()) as { error: { code: string } }).error.code, "method_not_allowed");
  });

  test("framing that is not HTTP on /v1/messages is answered in Anthropic's shape", async () => {
    const json = '{"model":"echo"}';
    const answer = await raw(
      `POST /v1/messages/count_tokens HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n${json}`,
    );
    assert.match(answer.status, / 400 /u);
    assert.ok(answer.requestId);
    const body = JSON.parse(answer.body) as { type: string; error: { type: string } };
    assert.equal(body.type, "error");
    assert.equal(body.error.type, "invalid_request_error");
    // The OpenAI routes keep the OpenAI envelope.
    const openai = await raw(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\n${json}`,
    );
    assert.ok("error" in (JSON.parse(openai.body) as object) && !openai.body.includes('"type":"error"'));
  });
});

test("what would change the answer is refused in words: a hosted tool as tool_choice, an item type nobody reads", async () => {
  const cases: [string, unknown, string, RegExp][] = [
    [
      "/v1/responses",
      { model: "echo", input: "hi", tools: [{ type: "web_search" }], tool_choice: { type: "web_search" } },
      "tool_choice",
      /hosted tool 'web_search', which a graph cannot be made to call/u,
    ],
    [
      "/v1/responses",
      { model: "echo", input: [{ type: "mystery", content: "x" }] },
      "input.0.type",
      /does not read items of type 'mystery'/u,
    ],
    [
      "/v1/messages",
      {
        model: "echo",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
        tools: [{ type: "web_search_20250305", name: "web_search" }],
        tool_choice: { type: "tool", name: "web_search" },
      },
      "tool_choice.name",
      /'web_search' is a server tool \(web_search_20250305\)/u,
    ],
  ];
  for (const [path, body, param, message] of cases) {
    const response = await post(path, body);
    const text = await response.text();
    assert.equal(response.status, 400, text);
    const error = (JSON.parse(text) as { error: { message: string; param?: string } }).error;
    assert.match(error.message, message);
    if (path === "/v1/responses") assert.equal(error.param, param);
  }
});
