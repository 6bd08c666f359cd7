import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  bundlePage,
  launchChromium,
  openPage,
  rememberingConversation,
  requireChromium,
  sayOnPage,
  screenshot,
} from "../helpers/browser.js";
import { type RunningServer, startCli } from "../helpers/cli.js";

// The frontends' own clients, unchanged, in pages bundled as an app bundles them, against the
// repository's own config served by the real CLI: the AI SDK's useChat at `/v1/ai-sdk/{model}`
// and AG-UI's HttpAgent at `/v1/ag-ui/{model}`, on the same origin.
const chromium = requireChromium();

describe("useChat from @ai-sdk/react, and AG-UI's HttpAgent, in a real browser", { skip: chromium.skip }, () => {
  let server: RunningServer;
  let origin: string;
  let browser: Browser;
  let html: string;
  let agUiHtml: string;

  before(async () => {
    [server, html, agUiHtml] = await Promise.all([
      startCli([]),
      bundlePage("./use-chat/use-chat-page.jsx", import.meta.url, "useChat"),
      bundlePage("./ag-ui/http-agent-page.jsx", import.meta.url, "AG-UI"),
    ]);
    origin = new URL(server.baseURL).origin;
    browser = await launchChromium(chromium.executablePath);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const open = (model: string, client: "use-chat" | "ag-ui" = "use-chat") =>
    openPage(browser, origin, { name: client, html: client === "use-chat" ? html : agUiHtml, query: `model=${model}` });
  const say = (page: Page, text: string, answer: RegExp) => sayOnPage(page, text, answer, "assistant");

  test("a streamed answer, a second turn that remembers, and a graph's status events", async () => {
    await rememberingConversation(await open("memory"), "assistant", "use-chat-memory");
    const researching = await open("research");
    try {
      await say(researching.page, "tides", /tides/iu);
      assert.match((await researching.page.locator(".event").allTextContents()).join(" "), /Research complete/u);
    } finally {
      await screenshot(researching.page, "use-chat-research");
      await researching.page.close();
    }
  });

  test("an interrupt shown on the page and answered from it", async () => {
    const { page, problems } = await open("approval");
    try {
      await page.fill("#prompt", "deploy");
      await page.click("#send");
      await page.locator("#question", { hasText: "May I go ahead with: deploy?" }).waitFor({ timeout: 10_000 });
      await page.click("#approve");
      await page.locator("#messages li.assistant", { hasText: "Approved: going ahead with deploy." }).waitFor({ timeout: 10_000 });
      assert.equal(await page.locator("#interrupt").count(), 0, "the question is gone once answered");
      assert.deepEqual(problems, { requests: [], errors: [] });
    } finally {
      await screenshot(page, "use-chat-approval");
      await page.close();
    }
  });

  test("AG-UI's HttpAgent: a streamed answer, a second run that remembers, an interrupt answered by resume", async () => {
    await rememberingConversation(await open("memory", "ag-ui"), "assistant", "ag-ui-memory");
    const asking = await open("approval", "ag-ui");
    try {
      await asking.page.fill("#prompt", "deploy");
      await asking.page.click("#send");
      await asking.page.locator("#question", { hasText: "May I go ahead with: deploy?" }).waitFor({ timeout: 10_000 });
      await asking.page.click("#approve");
      await asking.page.locator("#messages li.assistant", { hasText: "Approved: going ahead with deploy." }).waitFor({ timeout: 10_000 });
      assert.equal(await asking.page.locator("#interrupt").count(), 0, "the question is gone once answered");
      assert.deepEqual(asking.problems, { requests: [], errors: [] });
    } finally {
      await screenshot(asking.page, "ag-ui-approval");
      await asking.page.close();
    }
  });
});
