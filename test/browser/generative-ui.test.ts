import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import type { Browser } from "playwright-core";
import { bundlePage, launchChromium, openPage, requireChromium, screenshot } from "../helpers/browser.js";
import { type RunningServer, runCli, startCli } from "../helpers/cli.js";
import { ECHO_GRAPH_MODULE, tempProject } from "../helpers/temp-project.js";

// A project with LangGraph's generative UI (langgraph.json's `ui`), served as published: its
// components bundled at start, loaded into a page by the SDK's own LoadExternalComponent.
const chromium = requireChromium();
const PROJECT = fileURLToPath(new URL("../fixtures/generative-ui-project/", import.meta.url));

describe("a graph's generative UI, as agent-chat-ui loads it", { skip: chromium.skip, timeout: 120_000 }, () => {
  let server: RunningServer;
  let origin: string;
  let browser: Browser;
  before(async () => {
    server = await startCli([], { cwd: PROJECT });
    origin = new URL(server.baseURL).origin;
    browser = await launchChromium(chromium.executablePath);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test("the start says it serves the UI", () => {
    assert.match(server.output(), /the generative UI of agent \(at \/ui\/\{graph\}\)/u);
  });

  test("POST /ui/{graph}: the tags of the bundle; an unknown graph or a body without a name in the protocol's shape", async () => {
    const asked = await fetch(`${origin}/ui/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "weather" }),
    });
    assert.equal(asked.status, 200);
    assert.match(asked.headers.get("content-type") ?? "", /^text\/html/u);
    const html = await asked.text();
    const host = new URL(origin).host;
    assert.ok(html.includes(`<link rel="stylesheet" href="http://${host}/ui/agent/entrypoint.css" />`), html);
    assert.ok(html.includes(`onload='__LGUI_agent.render("weather", "{{shadowRootId}}")'`), html);
    const script = await fetch(`${origin}/ui/agent/entrypoint.js`);
    assert.equal(script.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.match(await script.text(), /var __LGUI_agent =/u);
    const css = await (await fetch(`${origin}/ui/agent/entrypoint.css`)).text();
    assert.match(css, /\.weather-card/u);

    const unknown = await fetch(`${origin}/ui/nobody`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(unknown.status, 422);
    const other = await fetch(`${origin}/ui/nobody`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "weather" }),
    });
    assert.equal(other.status, 404);
    assert.deepEqual(await other.json(), { detail: "No UI with id 'nobody' was found. The graphs with a UI here: agent." });
    // A name is written into an attribute: it cannot close it.
    const odd = await fetch(`${origin}/ui/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x' onerror='alert(1)" }),
    });
    assert.ok(!(await odd.text()).includes("' onerror='"), "the quote is escaped");
  });

  test("the graph's UI messages reach the SDK in its state", async () => {
    const client = new Client({ apiUrl: origin });
    const state = (await client.runs.wait(null, "agent", { input: { messages: [{ role: "user", content: "Lisbon" }] } })) as {
      messages: { id: string; content: string }[];
      ui: { type: string; name: string; props: { city: string }; metadata: Record<string, unknown> }[];
    };
    const answer = state.messages.at(-1)!;
    assert.equal(answer.content, "Here is the weather in Lisbon.");
    assert.equal(state.ui.length, 1);
    assert.deepEqual([state.ui[0]!.type, state.ui[0]!.name, state.ui[0]!.props], ["ui", "weather", { city: "Lisbon" }]);
    assert.equal(state.ui[0]!.metadata.id, answer.id, "the card names the message it belongs to");
  });

  test("in Chromium, LoadExternalComponent renders the graph's component with its CSS", async () => {
    const html = await bundlePage("./generative-ui/generative-ui-page.jsx", import.meta.url, "generative UI");
    const { page, problems } = await openPage(browser, origin, { name: "generative-ui", html, query: "" });
    try {
      await page.fill("#prompt", "Porto");
      await page.click("#send");
      // Playwright's CSS locators reach into open shadow roots.
      const card = page.locator("#messages li.ai .generative .weather-card");
      await card.waitFor({ timeout: 15_000 });
      assert.equal(await card.locator("h3").textContent(), "Porto");
      assert.equal(
        await card.evaluate((element) => element.ownerDocument.defaultView?.getComputedStyle(element).color),
        "rgb(0, 128, 0)",
        "the bundle's CSS applies",
      );
      assert.deepEqual(problems, { requests: [], errors: [] });
    } finally {
      await screenshot(page, "generative-ui");
      await page.close();
    }
  });
});

describe("a UI that does not build", () => {
  test("stops the start with one line naming langgraph.json's key and esbuild's error", async () => {
    const project = tempProject({
      "graph.ts": ECHO_GRAPH_MODULE,
      "ui.tsx": "export default { card: () => <div>unclosed </span> };\n",
      "langgraph.json": JSON.stringify({ graphs: { agent: "./graph.ts:graph" }, ui: { agent: "./ui.tsx" } }),
    });
    const outside = tempProject({
      "graph.ts": ECHO_GRAPH_MODULE,
      "langgraph.json": JSON.stringify({ graphs: { agent: "./graph.ts:graph" }, ui: { agent: "../elsewhere/ui.tsx" } }),
    });
    try {
      const broken = await runCli(["start", "--port", "0"], { cwd: project.dir });
      assert.notEqual(broken.code, 0);
      assert.match(
        broken.stderr,
        /langgraph\.json: ui\.agent: '\.\/ui\.tsx' did not build: .*ui\.tsx:1:\d+: Unexpected closing "span" tag does not match opening "div" tag/u,
      );
      const away = await runCli(["start", "--port", "0"], { cwd: outside.dir });
      assert.match(away.stderr, /langgraph\.json: ui\.agent: '\.\.\/elsewhere\/ui\.tsx' must be inside the project's folder/u);
    } finally {
      project.cleanup();
      outside.cleanup();
    }
  });
});
