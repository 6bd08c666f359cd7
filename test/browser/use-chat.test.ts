import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { bundlePage, launchChromium, type PageProblems, requireChromium, screenshot, watchPage } from "../helpers/browser.js";
import { type RunningServer, startCli } from "../helpers/cli.js";

// The AI SDK's useChat, unchanged, in a page bundled as an AI SDK app bundles it, against the
// repository's own config served by the real CLI: `/v1/ai-sdk/{model}` on the same origin.
const chromium = requireChromium();

describe("useChat from @ai-sdk/react in a real browser", { skip: chromium.skip }, () => {
  let server: RunningServer;
  let origin: string;
  let browser: Browser;
  let html: string;

  before(async () => {
    [server, html] = await Promise.all([startCli([]), bundlePage("./use-chat/use-chat-page.jsx", import.meta.url, "useChat")]);
    origin = new URL(server.baseURL).origin;
    browser = await launchChromium(chromium.executablePath);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function open(model: string): Promise<{ page: Page; problems: PageProblems }> {
    const page = await browser.newPage();
    const problems = watchPage(page, origin);
    await page.route(`${origin}/use-chat.html*`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: html }));
    await page.goto(`${origin}/use-chat.html?model=${model}`);
    await page.locator("#prompt").waitFor();
    return { page, problems };
  }

  async function say(page: Page, text: string, answer: RegExp): Promise<void> {
    await page.fill("#prompt", text);
    await page.click("#send");
    await page.locator("#messages li.assistant", { hasText: answer }).waitFor({ timeout: 10_000 });
    await page.locator("#status", { hasText: "idle" }).waitFor();
  }

  test("a streamed answer, a second turn that remembers, and a graph's status events", async () => {
    const { page, problems } = await open("memory");
    try {
      await say(page, "apples", /This is the start of our conversation/u);
      await say(page, "pears", /Before that you said: "apples"/u);
      assert.deepEqual(await page.locator("#messages li").allTextContents(), [
        "apples",
        'You said "apples". This is the start of our conversation.',
        "pears",
        'You said "pears". Before that you said: "apples".',
      ]);
      assert.deepEqual(problems, { requests: [], errors: [] });
    } finally {
      await screenshot(page, "use-chat-memory");
      await page.close();
    }
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
});
