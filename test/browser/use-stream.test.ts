import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { bundlePage, launchChromium, openPage, rememberingConversation, requireChromium, screenshot } from "../helpers/browser.js";
import { type RunningServer, startCli } from "../helpers/cli.js";

// LangGraph's React hook, unchanged, in a page bundled as a LangGraph app bundles it, against
// the repository's own config served by the real CLI: the Agent Protocol at the server root.
const chromium = requireChromium();

/** The same conversation through a page built with one `useStream` or the other. */
function pageTests(title: string, entry: string, name: string): void {
  describe(title, { skip: chromium.skip }, () => {
    let server: RunningServer;
    let origin: string;
    let browser: Browser;
    let html: string;

    before(async () => {
      [server, html] = await Promise.all([startCli([]), bundlePage(entry, import.meta.url, "useStream")]);
      origin = new URL(server.baseURL).origin;
      browser = await launchChromium(chromium.executablePath);
    });
    after(async () => {
      await browser?.close();
      await server?.stop();
    });

    const open = (assistant: string) => openPage(browser, origin, { name: "use-stream", html, query: `assistant=${assistant}` });

    test("a streamed answer, and a second turn that remembers the first", async () => {
      await rememberingConversation(await open("memory"), "ai", `${name}-memory`);
    });

    test("an interrupt shown on the page and answered from it", async () => {
      const { page, problems } = await open("approval");
      try {
        await page.fill("#prompt", "deploy");
        await page.click("#send");
        await page.locator("#question", { hasText: "May I go ahead with: deploy?" }).waitFor({ timeout: 10_000 });
        await page.click("#approve");
        await page.locator("#messages li.ai", { hasText: "Approved: going ahead with deploy." }).waitFor({ timeout: 10_000 });
        assert.equal(await page.locator("#interrupt").count(), 0, "the question is gone once answered");
        assert.deepEqual(problems, { requests: [], errors: [] });
      } finally {
        await screenshot(page, `${name}-approval`);
        await page.close();
      }
    });
  });
}

pageTests("useStream from @langchain/langgraph-sdk/react in a real browser", "./use-stream/sdk-page.jsx", "use-stream");
pageTests("useStream from @langchain/react (protocol v2) in a real browser", "./use-stream/react-page.jsx", "react-use-stream");
