import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Client } from "@langchain/langgraph-sdk";
import type { Browser, Page } from "playwright-core";
import {
  bundlePage,
  launchChromium,
  openPage,
  type PageProblems,
  rememberingConversation,
  requireChromium,
  sayOnPage,
  screenshot,
} from "../helpers/browser.js";
import { type RunningServer, startCli } from "../helpers/cli.js";

// LangGraph's React hook, unchanged, in a page bundled as a LangGraph app bundles it, against
// the repository's own config served by the real CLI: the Agent Protocol at the server root.
const chromium = requireChromium();

let server: RunningServer;
let origin: string;
let browser: Browser;

// One server and one browser for the file; each page is bundled once.
before(async () => {
  if (chromium.skip) return;
  server = await startCli([]);
  origin = new URL(server.baseURL).origin;
  browser = await launchChromium(chromium.executablePath);
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Runs `check` on an opened page, then expects no failed request or page error; screenshot `shot` and close either way. */
async function onPage(opened: Promise<{ page: Page; problems: PageProblems }>, shot: string, check: (page: Page) => Promise<void>) {
  const { page, problems } = await opened;
  try {
    await check(page);
    assert.deepEqual(problems, { requests: [], errors: [] });
  } finally {
    await screenshot(page, shot);
    await page.close();
  }
}

/** The approval demo on a chat page: asked "deploy", the question shown, Approve clicked, the answer shown. */
async function approveOnPage(page: Page): Promise<void> {
  await page.fill("#prompt", "deploy");
  await page.click("#send");
  await page.locator("#question", { hasText: "May I go ahead with: deploy?" }).waitFor({ timeout: 10_000 });
  await page.click("#approve");
  await page.locator("#messages li.ai", { hasText: "Approved: going ahead with deploy." }).waitFor({ timeout: 10_000 });
}

/** The same conversation through a page built with one `useStream` or the other. */
function pageTests(title: string, entry: string, name: string): void {
  describe(title, { skip: chromium.skip }, () => {
    let html: string;

    before(async () => {
      html = await bundlePage(entry, import.meta.url, "useStream");
    });

    const open = (assistant: string) => openPage(browser, origin, { name: "use-stream", html, query: `assistant=${assistant}` });

    test("a streamed answer, and a second turn that remembers the first", async () => {
      await rememberingConversation(await open("memory"), "ai", `${name}-memory`);
    });

    test("an interrupt shown on the page and answered from it", async () => {
      await onPage(open("approval"), `${name}-approval`, async (page) => {
        await approveOnPage(page);
        assert.equal(await page.locator("#interrupt").count(), 0, "the question is gone once answered");
      });
    });
  });
}

pageTests("useStream from @langchain/langgraph-sdk/react in a real browser", "./use-stream/sdk-page.jsx", "use-stream");
pageTests("useStream from @langchain/react (protocol v2) in a real browser", "./use-stream/react-page.jsx", "react-use-stream");

describe("agent-chat-ui's calls through useStream in a real browser", { skip: chromium.skip }, () => {
  let html: string;
  before(async () => {
    html = await bundlePage("./use-stream/agent-chat-ui-page.jsx", import.meta.url, "agent-chat-ui");
  });
  const open = (assistant: string) => openPage(browser, origin, { name: "agent-chat-ui", html, query: `assistant=${assistant}` });

  test("a conversation that remembers, and the thread in the sidebar's list by graph_id", async () => {
    await onPage(open("memory"), "agent-chat-ui-memory", async (page) => {
      await page.locator("#ready", { hasText: "ready" }).waitFor();
      await sayOnPage(page, "apples", /This is the start of our conversation/u, "ai");
      await sayOnPage(page, "pears", /Before that you said: "apples"/u, "ai");
      const thread = await page.locator("#thread").textContent();
      assert.match(thread ?? "", /^[0-9a-f-]{36}$/u);
      await page.locator("#threads li", { hasText: thread! }).waitFor({ timeout: 10_000 });
    });
  });

  test("an interrupt answered as the Agent Inbox answers it: submit({}, { command: { resume } })", async () => {
    await onPage(open("approval"), "agent-chat-ui-approval", approveOnPage);
  });

  test("a model with client settings and no context: its settings' defaults", async () => {
    await onPage(open("research"), "agent-chat-ui-research", (page) =>
      sayOnPage(page, "What is LangGraph?", /I looked at 2 sources about What is LangGraph and explain it in plain words\./u, "ai"),
    );
  });
});

describe("branching with useStream in a real browser: edit, regenerate, switch branch", { skip: chromium.skip }, () => {
  let html: string;
  before(async () => {
    html = await bundlePage("./use-stream/branching-page.jsx", import.meta.url, "branching");
  });

  test("an edited message forks the conversation before it; the branches are switched back and forth", async () => {
    await onPage(
      openPage(browser, origin, { name: "branching", html, query: "assistant=memory" }),
      "use-stream-branching",
      async (page) => {
        const texts = () => page.locator("#messages li .text").allTextContents();
        const idle = () => page.locator("#status", { hasText: "idle" }).waitFor({ timeout: 10_000 });
        await sayOnPage(page, "apples", /This is the start of our conversation/u, "ai");
        await sayOnPage(page, "pears", /Before that you said: "apples"/u, "ai");
        await idle();
        const first = [
          "apples",
          'You said "apples". This is the start of our conversation.',
          "pears",
          'You said "pears". Before that you said: "apples".',
        ];

        // The second message edited: the branch forks before it, so "apples" is still remembered.
        await page.fill("#edited", "plums");
        await page.locator("#messages li.human .edit").nth(1).click();
        await page
          .locator("#messages li.ai", { hasText: 'You said "plums". Before that you said: "apples".' })
          .waitFor({ timeout: 10_000 });
        await idle();
        const second = [first[0], first[1], "plums", 'You said "plums". Before that you said: "apples".'];
        assert.deepEqual(await texts(), second);
        const branches = page.locator("#messages li.human .branches").last();
        assert.equal(await branches.getAttribute("data-count"), "2");

        // Back to the first branch, and forward again.
        await branches.locator(".previous").click();
        await page.locator("#messages li.human", { hasText: "pears" }).waitFor({ timeout: 10_000 });
        assert.deepEqual(await texts(), first);
        await page.locator("#messages li.human .branches").last().locator(".next").click();
        await page.locator("#messages li.human", { hasText: "plums" }).waitFor({ timeout: 10_000 });
        assert.deepEqual(await texts(), second);

        // The last answer regenerated: a second answer to the same question, in its place.
        await page.locator("#messages li.ai .regenerate").last().click();
        await page.locator("#messages li.ai .branches[data-count='2']").waitFor({ timeout: 10_000 });
        await idle();
        assert.deepEqual(await texts(), second);
      },
    );
  });
});

describe("forking with @langchain/react (protocol v2) in a real browser", { skip: chromium.skip }, () => {
  let html: string;
  before(async () => {
    html = await bundlePage("./use-stream/fork-page.jsx", import.meta.url, "fork");
  });

  test("an answer regenerated from the checkpoint it was first seen on: a new answer in its place, the thread branched", async () => {
    await onPage(openPage(browser, origin, { name: "fork", html, query: "assistant=memory" }), "react-use-stream-fork", async (page) => {
      await sayOnPage(page, "apples", /This is the start of our conversation/u, "ai");
      await sayOnPage(page, "pears", /Before that you said: "apples"/u, "ai");
      const answer = page.locator("#messages li.ai").last();
      const before = await answer.textContent();
      await page.locator("#regenerate").waitFor({ timeout: 10_000 });
      await page.click("#regenerate");
      await page
        .locator("#status", { hasText: "loading" })
        .waitFor({ timeout: 10_000 })
        .catch(() => {});
      await page.locator("#regenerate").waitFor({ timeout: 10_000 });
      assert.deepEqual(await page.locator("#messages li").allTextContents(), [
        "apples",
        'You said "apples". This is the start of our conversation.',
        "pears",
        before,
      ]);
      // The server's thread: the regenerated answer on a branch of its own, the first one still in its history.
      const threadId = await page.evaluate(
        () =>
          new URL(
            performance
              .getEntriesByType("resource")
              .map((entry) => entry.name)
              .find((name) => name.includes("/threads/"))!,
          ).pathname.split("/")[2],
      );
      const history = await new Client({ apiUrl: origin }).threads.getHistory(threadId!, { limit: 50 });
      const answers = history.filter((state) => (state.values as { messages?: unknown[] }).messages?.length === 4);
      assert.ok(answers.length >= 2, `two states that end with an answer to "pears", one per branch (${answers.length})`);
    });
  });
});
