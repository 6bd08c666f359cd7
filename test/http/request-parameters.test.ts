import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import OpenAI from "openai";
import { graph as echoGraph } from "../../demo/graphs/echo.js";
import { requestParameters } from "../../src/parameters/request-parameters.js";
import { chatOpenAIGraph, startLoopbackProvider } from "../helpers/loopback-provider.js";
import { assertMatchesOpenAI, assertMatchesResponses } from "../helpers/openai-schema.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

/** Answers with the parameters it received, as JSON: what graph code sees. */
function parametersGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("show", (_state, config) => ({ messages: [new AIMessage(JSON.stringify(requestParameters(config)))] }))
    .addEdge(START, "show")
    .addEdge("show", END)
    .compile();
}

/** Claims structured output, then answers with prose. */
function prosyGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode("say", () => ({ messages: [new AIMessage("Sure! Here is some JSON for you.")] }))
    .addEdge(START, "say")
    .addEdge("say", END)
    .compile();
}

let provider: Awaited<ReturnType<typeof startLoopbackProvider>>;
let server: TestServer;
let client: OpenAI;

before(async () => {
  provider = await startLoopbackProvider(() => ({
    body: JSON.stringify({
      id: "chatcmpl-provider",
      object: "chat.completion",
      created: 1,
      model: "gpt-test",
      choices: [{ index: 0, message: { role: "assistant", content: '{"ok":true}' }, finish_reason: "stop", logprobs: null }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    }),
  }));
  server = await startTestServer(
    {
      params: { graph: parametersGraph(), description: "Shows its parameters", structuredOutput: true },
      prosy: { graph: prosyGraph(), description: "Claims JSON, answers prose", structuredOutput: true },
      echo: { graph: echoGraph, description: "Echo", streamableNodeNames: ["respond"] },
      provider: {
        // A real ChatOpenAI made with temperature 0.7, the request's parameters applied.
        graph: chatOpenAIGraph(provider.baseURL, { temperature: 0.7, withParameters: true }),
        description: "A provider behind ChatOpenAI",
        structuredOutput: true,
      },
    },
    { aiSdk: true },
  );
  client = new OpenAI({ baseURL: server.baseURL, apiKey: "x", maxRetries: 0 });
});
after(async () => {
  await server.close();
  await provider.close();
});

const SCHEMA = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false };
const TOOL_PARAMETERS = { type: "object", properties: { city: { type: "string" } } };

/** What every test below expects graph code to see, whichever API the request came on. */
const NORMALISED = {
  temperature: 0.3,
  topP: 0.9,
  maxTokens: 64,
  presencePenalty: 0.5,
  frequencyPenalty: -0.5,
  responseFormat: { type: "json_schema", name: "answer", description: "The answer", schema: SCHEMA, strict: true },
  reasoning: { effort: "high" },
  tools: [{ name: "get_weather", description: "Weather for a city", parameters: TOOL_PARAMETERS, strict: false }],
  toolChoice: { type: "function", name: "get_weather" },
  parallelToolCalls: false,
};

async function post(path: string, body: Record<string, unknown>) {
  const response = await fetch(`${server.baseURL}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

describe("request parameters reach the graph, normalised across the two APIs", () => {
  test("chat completions: every parameter arrives, with its type", async () => {
    const completion = await client.chat.completions.create({
      model: "params",
      messages: [{ role: "user", content: "show" }],
      temperature: 0.3,
      top_p: 0.9,
      max_completion_tokens: 64,
      stop: ["END", "STOP"],
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      response_format: { type: "json_schema", json_schema: { name: "answer", description: "The answer", schema: SCHEMA, strict: true } },
      reasoning_effort: "high",
      tools: [
        {
          type: "function",
          function: { name: "get_weather", description: "Weather for a city", parameters: TOOL_PARAMETERS, strict: false },
        },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      parallel_tool_calls: false,
    });
    assertMatchesOpenAI("CreateChatCompletionResponse", completion);
    assert.deepEqual(JSON.parse(completion.choices[0]!.message.content!), { ...NORMALISED, stop: ["END", "STOP"], seed: 42 });
  });

  test("Responses: the same parameters, spelt its way, arrive as the same object", async () => {
    const { status, body } = await post("/responses", {
      model: "params",
      input: "show",
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 64,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      text: { format: { type: "json_schema", name: "answer", description: "The answer", schema: SCHEMA, strict: true } },
      reasoning: { effort: "high" },
      tools: [{ type: "function", name: "get_weather", description: "Weather for a city", parameters: TOOL_PARAMETERS, strict: false }],
      tool_choice: { type: "function", name: "get_weather" },
      parallel_tool_calls: false,
    });
    assert.equal(status, 200, JSON.stringify(body));
    assertMatchesResponses("Response", body);
    assert.deepEqual(JSON.parse(body.output[0].content[0].text), NORMALISED);
    assert.deepEqual(body.text.format, { type: "json_schema", name: "answer", description: "The answer", schema: null, strict: true });
  });

  test("the older spellings: max_tokens, a single stop string, json_object, reasoning.generate_summary", async () => {
    const chat = await post("/chat/completions", {
      model: "params",
      messages: [{ role: "user", content: "show" }],
      max_tokens: 9,
      stop: "END",
      response_format: { type: "json_object" },
    });
    assert.deepEqual(JSON.parse(chat.body.choices[0].message.content), {
      maxTokens: 9,
      stop: ["END"],
      responseFormat: { type: "json_object" },
    });
    const responses = await post("/responses", { model: "params", input: "show", reasoning: { generate_summary: "concise" } });
    assert.deepEqual(JSON.parse(responses.body.output[0].content[0].text), { reasoning: { summary: "concise" } });
  });

  test("no parameters: graph code sees an empty object", async () => {
    const { body } = await post("/chat/completions", { model: "params", messages: [{ role: "user", content: "show" }] });
    assert.equal(body.choices[0].message.content, "{}");
  });

  test("withRequestParameters: a real ChatOpenAI sends them to its provider", async () => {
    provider.received.length = 0;
    const completion = await client.chat.completions.create({
      model: "provider",
      messages: [{ role: "user", content: "hi" }],
      temperature: 0.3,
      top_p: 0.9,
      max_tokens: 64,
      stop: ["END"],
      seed: 42,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: SCHEMA, strict: true } },
      tools: [{ type: "function", function: { name: "get_weather", parameters: TOOL_PARAMETERS } }],
      tool_choice: "required",
      parallel_tool_calls: false,
    });
    assert.equal(completion.choices[0]!.message.content, '{"ok":true}');
    const sent = provider.received[0]!;
    assert.equal(sent.temperature, 0.3, "the request's temperature beats the model's 0.7");
    assert.equal(sent.top_p, 0.9);
    assert.equal(sent.max_completion_tokens ?? sent.max_tokens, 64);
    assert.deepEqual(sent.stop, ["END"]);
    assert.equal(sent.seed, 42);
    assert.equal(sent.presence_penalty, 0.5);
    assert.equal(sent.frequency_penalty, -0.5);
    assert.deepEqual((sent.response_format as { type: string }).type, "json_schema");
    assert.deepEqual(
      ((sent.tools as { function: { name: string } }[]) ?? []).map((tool) => tool.function.name),
      ["get_weather"],
    );
    assert.equal(sent.tool_choice, "required");
    assert.equal(sent.parallel_tool_calls, false);
    provider.received.length = 0;
    await client.chat.completions.create({ model: "provider", messages: [{ role: "user", content: "hi" }] });
    assert.equal(provider.received[0]!.temperature, 0.7, "without parameters the model is used as it was made");
    assert.equal(provider.received[0]!.tools, undefined);
  });
});

test("assistant-ui's AssistantChatTransport on the AI SDK surface: its system prompt and frontend tools reach the model", async () => {
  provider.received.length = 0;
  const answer = await fetch(`${server.baseURL}/ai-sdk/provider`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    // The body AssistantChatTransport sends: useChat's, plus `system`, `tools` and `callSettings`.
    body: JSON.stringify({
      id: "chat-1",
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "weather in Oslo?" }] }],
      trigger: "submit-message",
      system: "You are the page's assistant.",
      tools: { get_weather: { description: "Weather for a city", parameters: TOOL_PARAMETERS } },
      callSettings: {},
    }),
  });
  assert.equal(answer.status, 200);
  await answer.text();
  const sent = provider.received[0]!;
  const messages = sent.messages as { role: string; content: string }[];
  assert.deepEqual(messages[0], { role: "system", content: "You are the page's assistant." });
  assert.deepEqual(
    ((sent.tools as { function: { name: string; description?: string } }[]) ?? []).map((tool) => [
      tool.function.name,
      tool.function.description,
    ]),
    [["get_weather", "Weather for a city"]],
  );
});

describe("the echo demo honours max_tokens and stop", () => {
  const words = Array.from({ length: 20 }, (_, index) => `w${index}`).join(" ");

  test("chat completions: it stops after max_tokens words with finish_reason length, complete and streamed", async () => {
    const complete = await client.chat.completions.create({ model: "echo", messages: [{ role: "user", content: words }], max_tokens: 3 });
    assert.equal(complete.choices[0]!.message.content, "w0 w1 w2");
    assert.equal(complete.choices[0]!.finish_reason, "length");
    const stream = await client.chat.completions.create({
      model: "echo",
      messages: [{ role: "user", content: words }],
      max_completion_tokens: 3,
      stream: true,
    });
    let text = "";
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      assertMatchesOpenAI("CreateChatCompletionStreamResponse", chunk);
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text.trim(), "w0 w1 w2");
    assert.equal(finish, "length");
  });

  test("Responses: max_output_tokens makes the response incomplete, complete and streamed", async () => {
    const long = Array.from({ length: 40 }, (_, index) => `w${index}`).join(" ");
    const response = await client.responses.create({ model: "echo", input: long, max_output_tokens: 16 });
    assertMatchesResponses("Response", response);
    assert.equal(response.status, "incomplete");
    assert.deepEqual(response.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(response.output_text.split(" ").length, 16);
    const stream = client.responses.stream({ model: "echo", input: long, max_output_tokens: 16 });
    const types: string[] = [];
    for await (const event of stream) {
      assertMatchesResponses("ResponseStreamEvent", event);
      types.push(event.type);
    }
    assert.equal(types.at(-1), "response.incomplete");
  });

  test("stop: the answer ends before the stop sequence", async () => {
    const completion = await client.chat.completions.create({ model: "echo", messages: [{ role: "user", content: words }], stop: ["w5"] });
    assert.equal(completion.choices[0]!.message.content!.trim(), "w0 w1 w2 w3 w4");
    assert.equal(completion.choices[0]!.finish_reason, "stop");
  });
});

describe("JSON formats", () => {
  test("a graph without structuredOutput refuses a JSON format before it runs, on both APIs", async () => {
    const chat = await post("/chat/completions", {
      model: "echo",
      messages: [{ role: "user", content: "hi" }],
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: SCHEMA } },
    });
    assert.equal(chat.status, 400);
    assertMatchesOpenAI("ErrorResponse", chat.body);
    assert.deepEqual([chat.body.error.code, chat.body.error.param], ["unsupported_parameter", "response_format"]);
    assert.match(chat.body.error.message, /echo.*structuredOutput/u);
    const responses = await post("/responses", { model: "echo", input: "hi", text: { format: { type: "json_object" } } });
    assert.equal(responses.status, 400);
    assertMatchesResponses("ErrorResponse", responses.body);
    assert.deepEqual([responses.body.error.code, responses.body.error.param], ["unsupported_parameter", "text.format"]);
    const text = await post("/responses", { model: "echo", input: "hi", text: { format: { type: "text" } } });
    assert.equal(text.status, 200, "a text format is what every graph answers in");
  });

  test("a graph that claims structuredOutput and answers prose fails, never passing it off as JSON", async () => {
    const { status, body } = await post("/chat/completions", {
      model: "prosy",
      messages: [{ role: "user", content: "hi" }],
      response_format: { type: "json_object" },
    });
    assert.equal(status, 500);
    assert.equal(body.error.code, "graph_configuration_error");
    const plain = await post("/chat/completions", { model: "prosy", messages: [{ role: "user", content: "hi" }] });
    assert.equal(plain.status, 200, "without a JSON format, prose is the answer");
  });
});

describe("bad parameters are a 400 naming the parameter, before the graph runs", () => {
  const chat = (fields: Record<string, unknown>) => ({ model: "params", messages: [{ role: "user", content: "hi" }], ...fields });
  const responses = (fields: Record<string, unknown>) => ({ model: "params", input: "hi", ...fields });
  const weather = { type: "function", function: { name: "get_weather" } };
  const cases: [string, "/chat/completions" | "/responses", Record<string, unknown>, string][] = [
    ["temperature above 2", "/chat/completions", chat({ temperature: 2.5 }), "temperature"],
    ["temperature of the wrong type", "/responses", responses({ temperature: "hot" }), "temperature"],
    ["top_p above 1", "/chat/completions", chat({ top_p: 1.5 }), "top_p"],
    ["max_tokens of 0", "/chat/completions", chat({ max_tokens: 0 }), "max_tokens"],
    ["max_completion_tokens not an integer", "/chat/completions", chat({ max_completion_tokens: 2.5 }), "max_completion_tokens"],
    ["max_output_tokens under 16", "/responses", responses({ max_output_tokens: 5 }), "max_output_tokens"],
    ["five stop sequences", "/chat/completions", chat({ stop: ["a", "b", "c", "d", "e"] }), "stop"],
    ["seed not an integer", "/chat/completions", chat({ seed: 1.5 }), "seed"],
    ["presence_penalty below -2", "/chat/completions", chat({ presence_penalty: -3 }), "presence_penalty"],
    ["frequency_penalty above 2", "/responses", responses({ frequency_penalty: 3 }), "frequency_penalty"],
    ["an unknown reasoning_effort", "/chat/completions", chat({ reasoning_effort: "extreme" }), "reasoning_effort"],
    ["an unknown reasoning.effort", "/responses", responses({ reasoning: { effort: "extreme" } }), "reasoning.effort"],
    ["an unknown response_format type", "/chat/completions", chat({ response_format: { type: "yaml" } }), "response_format.type"],
    [
      "a response_format schema that is not JSON Schema",
      "/chat/completions",
      chat({ response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "nope" } } } }),
      "response_format.json_schema.schema",
    ],
    [
      "a text.format schema that is not JSON Schema",
      "/responses",
      responses({ text: { format: { type: "json_schema", name: "x", schema: { required: "answer" } } } }),
      "text.format.schema",
    ],
    [
      "a json_schema format without a name",
      "/responses",
      responses({ text: { format: { type: "json_schema", schema: SCHEMA } } }),
      "text.format.name",
    ],
    ["two tools with one name", "/chat/completions", chat({ tools: [weather, weather] }), "tools.1.function.name"],
    [
      "two Responses tools with one name",
      "/responses",
      responses({
        tools: [
          { type: "function", name: "f" },
          { type: "function", name: "f" },
        ],
      }),
      "tools.1.name",
    ],
    [
      "a tool name with a space",
      "/chat/completions",
      chat({ tools: [{ type: "function", function: { name: "get weather" } }] }),
      "tools.0.function.name",
    ],
    [
      "tool_choice naming a function that is not a tool",
      "/chat/completions",
      chat({ tools: [weather], tool_choice: { type: "function", function: { name: "get_time" } } }),
      "tool_choice.function.name",
    ],
    [
      "tool_choice naming a function with no tools",
      "/responses",
      responses({ tool_choice: { type: "function", name: "f" } }),
      "tool_choice.name",
    ],
  ];
  for (const [what, path, body, param] of cases) {
    test(`${what}: 400, param ${param}`, async () => {
      const response = await post(path, body);
      assert.equal(response.status, 400, JSON.stringify(response.body));
      if (path === "/responses") assertMatchesResponses("ErrorResponse", response.body);
      else assertMatchesOpenAI("ErrorResponse", response.body);
      assert.equal(response.body.error.param, param, response.body.error.message);
      assert.ok(response.body.error.message.length > 10, "a sentence, not a code");
    });
  }
});
