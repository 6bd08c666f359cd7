import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { echoGraph } from "../fixtures/graphs.js";
import { launchChromium, requireChromium, screenshot } from "../helpers/browser.js";
import { startTestServer, type TestServer } from "../helpers/server.js";

const chromium = requireChromium();
const KEY = "sk-playground-0123456789";

describe("the playground on a server with API keys", { skip: chromium.skip }, () => {
  let server: TestServer;
  let browser: Browser;

  before(async () => {
    server = await startTestServer(
      { echo: { graph: echoGraph(), description: "Echo" } },
      { playground: true, auth: { keys: [{ tenant: "team", key: KEY }] } },
    );
    browser = await launchChromium(chromium.executablePath);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test("says a key is needed, and works once one is typed", async () => {
    const page = await browser.newPage();
    await page.goto(`${server.baseURL}/playground`);
    const error = page.locator(".turn.system .error");
    await error.waitFor();
    assert.match((await error.textContent()) ?? "", /API key.*Type it in the API key box above\./u);
    await page.fill("#api-key", KEY);
    await page.press("#api-key", "Enter");
    await page.locator("#send:not([disabled])").waitFor();
    await page.fill("#prompt", "with a key");
    await page.press("#prompt", "Enter");
    await page.locator(".turn.assistant:not(.pending) .content").waitFor();
    assert.equal(await page.locator(".turn.assistant .content").textContent(), "with a key");
    // The graph's diagram is asked for with the key, as the models are; without one it is refused.
    await page.locator("#graph-drawing svg").waitFor();
    assert.equal((await fetch(`${server.baseURL}/playground/graph/echo`)).status, 401);
    assert.equal((await fetch(`${server.baseURL}/playground/mermaid.min.js`)).status, 200, "the renderer is a public asset");
    await screenshot(page, "playground-api-key");
    await page.close();
  });
});
