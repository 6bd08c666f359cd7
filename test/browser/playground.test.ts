import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { launchChromium, type PageProblems, requireChromium, screenshot, watchPage } from "../helpers/browser.js";
import { type RunningServer, startCli } from "../helpers/cli.js";

// The repository's own demo models, served by the real CLI as a newcomer starts it: on a
// loopback host the playground is on without asking.
const chromium = requireChromium();

describe("the playground in a real browser", { skip: chromium.skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let problems: PageProblems;

  before(async () => {
    server = await startCli([]);
    browser = await launchChromium(chromium.executablePath);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    problems = watchPage(page, new URL(server.baseURL).origin);
    await page.goto(`${server.baseURL}/playground`);
    // The models arrive after the page has loaded; Send is enabled once the first is shown.
    await page.locator("#send:not([disabled])").waitFor();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Picks a model and waits until its details are shown. */
  async function pick(model: string): Promise<void> {
    // Selecting the model already shown would load it again and start a new chat when that load
    // ends, possibly under a message sent meanwhile (its answer then never shows): only a change.
    if ((await page.inputValue("#model")) !== model) await page.selectOption("#model", model);
    await page.waitForURL((url) => url.searchParams.get("model") === model);
  }

  /** Sends a message and waits for the answer to be complete. */
  async function say(text: string): Promise<void> {
    const answered = await page.locator(".turn.assistant").count();
    await page.fill("#prompt", text);
    await page.press("#prompt", "Enter");
    await page.locator(".turn.assistant").nth(answered).and(page.locator(":not(.pending)")).waitFor();
  }

  const lastAnswer = () => page.locator(".turn.assistant").last();

  test("lists the demo models and streams an echo answer with its usage", async () => {
    const models = await page.locator("#model option").allTextContents();
    for (const model of ["echo", "plain", "research", "approval", "tools"]) assert.ok(models.includes(model), `${model} in ${models}`);
    await pick("echo");
    // Count how often the answer's text changes while it arrives: a stream changes it word by word.
    // (The page's own scripting, run in the browser.)
    await page.evaluate(`
      window.textChanges = 0;
      new MutationObserver((records) => {
        window.textChanges += records.filter((record) => record.target.classList?.contains("content")).length;
      }).observe(document.getElementById("transcript"), { childList: true, subtree: true });
    `);
    await say("streams arrive word by word");
    assert.equal(await lastAnswer().locator(".content").textContent(), "streams arrive word by word");
    const changes = (await page.evaluate("window.textChanges")) as number;
    assert.ok(changes >= 3, `the answer arrived in ${changes} pieces`);
    assert.match((await lastAnswer().locator(".usage").textContent()) ?? "", /^usage: \d+ prompt \+ \d+ completion = \d+ tokens$/u);
    // And complete, with the stream switch off.
    await page.uncheck("#stream");
    await say("one piece");
    assert.equal(await lastAnswer().locator(".content").textContent(), "one piece");
    assert.match((await lastAnswer().locator(".usage").textContent()) ?? "", /^usage: /u);
    await page.check("#stream");
    await screenshot(page, "playground-echo");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("memory: a chat is one session, kept on the model's thread; a new chat is a new session", async () => {
    await pick("memory");
    await page.click("#new-chat");
    const sessions: string[] = [];
    const onRequest = (request: { url(): string; postData(): string | null }) => {
      if (request.url().endsWith("/chat/completions")) sessions.push(JSON.parse(request.postData() ?? "{}").metadata?.session_id);
    };
    page.on("request", onRequest);
    try {
      await say("one");
      await say("two");
      assert.equal(await lastAnswer().locator(".content").textContent(), 'You said "two". Before that you said: "one".');
      await page.click("#new-chat");
      await say("three");
      assert.equal(await lastAnswer().locator(".content").textContent(), 'You said "three". This is the start of our conversation.');
    } finally {
      page.off("request", onRequest);
    }
    assert.equal(sessions.length, 3);
    assert.match(sessions[0]!, /^playground-[0-9a-f]{32}$/u);
    assert.equal(sessions[1], sessions[0], "one chat, one session");
    assert.notEqual(sessions[2], sessions[0], "a new chat, a new session");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("think: the reasoning is shown collapsed above the answer, streamed and complete", async () => {
    await pick("think");
    for (const stream of [true, false]) {
      if (stream) await page.check("#stream");
      else await page.uncheck("#stream");
      await say("Can we ship today?");
      const reasoning = lastAnswer().locator("details.reasoning");
      assert.equal(await reasoning.isVisible(), true, "the reasoning block is shown");
      assert.equal(await reasoning.getAttribute("open"), null, "collapsed");
      assert.equal(await lastAnswer().locator(".reasoning-text").isVisible(), false, "its text hidden until opened");
      assert.match((await lastAnswer().locator(".reasoning-text").textContent()) ?? "", /^The user asked something/u);
      assert.match((await lastAnswer().locator(".content").textContent()) ?? "", /^I thought about "Can we ship today\?"/u);
      assert.ok(!((await lastAnswer().locator(".content").textContent()) ?? "").includes("restate"), "no reasoning in the answer");
      const box = (locator: typeof reasoning) => locator.boundingBox().then((found) => found!.y);
      assert.ok((await box(reasoning)) < (await box(lastAnswer().locator(".content"))), "above the answer");
    }
    await page.check("#stream");
    await lastAnswer().locator("details.reasoning summary").click();
    assert.equal(await lastAnswer().locator(".reasoning-text").isVisible(), true, "opens on a click");
    await screenshot(page, "playground-think");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("research: a settings form from the schema, live status and progress, an artifact and citations as links", async () => {
    await pick("research");
    assert.equal(await page.locator("#settings").isVisible(), true);
    assert.equal(await page.inputValue("#settings-fields [name=depth]"), "2", "the default depth");
    assert.equal(await page.getAttribute("#settings-fields [name=depth]", "max"), "5");
    assert.deepEqual(await page.locator("#settings-fields [name=audience] option").allTextContents(), ["general", "expert", "child"]);
    await page.fill("#settings-fields [name=depth]", "3");
    await page.selectOption("#settings-fields [name=audience]", { label: "child" });
    await say("What is LangGraph?");
    const answer = lastAnswer();
    assert.match(
      (await answer.locator(".content").textContent()) ?? "",
      /^I looked at 3 sources about What is LangGraph and explain it simply enough for a child\.$/u,
    );
    assert.deepEqual(await answer.locator(".statuses li").allTextContents(), [
      "researchSearching 3 sources",
      "researchWriting the answer",
      "researchResearch complete",
    ]);
    assert.equal(await answer.locator(".statuses li.running").count(), 0, "the last status says done");
    assert.equal(await answer.locator("progress").getAttribute("value"), "3");
    assert.equal(await answer.locator("progress").getAttribute("max"), "3");
    assert.equal(await answer.locator(".artifacts a").getAttribute("href"), "https://example.com/notes/1");
    const citation = answer.locator(".citations a");
    assert.equal(await citation.getAttribute("href"), "https://example.com/sources");
    assert.equal(await citation.textContent(), "Sources consulted");
    assert.equal(await answer.locator(".citations .cited").textContent(), " “3 sources”");
    await screenshot(page, "playground-research");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("research: a depth the schema refuses shows the server's 400", async () => {
    await page.fill("#settings-fields [name=depth]", "9");
    await say("Too deep?");
    const error = lastAnswer().locator(".error");
    assert.match((await error.textContent()) ?? "", /^invalid_client_settings: .*depth.*\(metadata\.graph_runtime_settings\)$/u);
    assert.equal(await page.locator(".turn.user.unsent").count(), 1, "the refused message is marked as not sent");
    await screenshot(page, "playground-research-bad-depth");
    // The refused request is the one problem, and the browser's own console line about it.
    assert.equal(problems.requests.length, 1, problems.requests.join("\n"));
    assert.match(problems.requests[0]!, /\/chat\/completions answered 400$/u);
    problems.requests.length = 0;
    problems.errors = problems.errors.filter((error) => !/status of 400/u.test(error));
    assert.deepEqual(problems.errors, []);
  });

  test("approval: the question as text, its options as buttons, the composer waiting until one is clicked, the card then answered", async () => {
    await pick("approval");
    assert.equal(await page.locator("#no-settings").isVisible(), true);
    await say("ship the release");
    // This turn's card, still found once the answer is the last turn.
    const card = page
      .locator(".turn.assistant")
      .nth((await page.locator(".turn.assistant").count()) - 1)
      .locator(".tool-call.interrupt");
    assert.equal(await card.locator(".question").textContent(), "May I go ahead with: ship the release?");
    assert.deepEqual(await card.locator("button.option").allTextContents(), ["approve", "reject"]);
    assert.equal(await card.locator("textarea.answer").isVisible(), true, "a free answer beside the options");
    assert.equal(await lastAnswer().getAttribute("data-finish-reason"), "tool_calls");
    // While the question is open, a message typed in the composer would start a new run and leave it pending.
    assert.equal(await page.locator("#prompt").isDisabled(), true);
    assert.equal(await page.locator("#send").isDisabled(), true);
    await screenshot(page, "playground-approval-interrupt");
    const answered = await page.locator(".turn.assistant").count();
    await card.locator("button.option", { hasText: "approve" }).click();
    await page.locator(".turn.assistant").nth(answered).and(page.locator(":not(.pending)")).waitFor();
    assert.equal(await lastAnswer().locator(".content").textContent(), "Approved: going ahead with ship the release.");
    assert.equal(await lastAnswer().getAttribute("data-finish-reason"), "stop");
    // The card keeps its question and says what was answered; the composer is live again.
    assert.equal(await card.getAttribute("class"), "tool-call interrupt answered");
    assert.equal(await card.locator(".given-answer").textContent(), "Answered: approve");
    assert.equal(await card.locator("button").count(), 0);
    assert.equal(await page.locator("#prompt").isDisabled(), false);
    await screenshot(page, "playground-approval-resumed");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("approval: a free answer typed beside the options resumes the run with it", async () => {
    await page.click("#new-chat");
    await say("delete the database");
    const turn = page.locator(".turn.assistant").nth((await page.locator(".turn.assistant").count()) - 1);
    const card = turn.locator(".tool-call.interrupt");
    await card.locator("textarea.answer").fill("not today");
    const answered = await page.locator(".turn.assistant").count();
    await turn.locator(".answer-send").click();
    await page.locator(".turn.assistant").nth(answered).and(page.locator(":not(.pending)")).waitFor();
    assert.equal(
      await lastAnswer().locator(".content").textContent(),
      'Not approved (you said "not today"): I will not do delete the database.',
    );
    assert.equal(await card.locator(".given-answer").textContent(), "Answered: not today");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("the selected model's graph is drawn under its description (LangGraph's Mermaid drawing, served here)", async () => {
    await pick("research");
    const drawing = page.locator("#graph-drawing svg");
    await drawing.waitFor();
    const labels = await drawing.locator(".nodeLabel").allTextContents();
    for (const node of ["search", "answer"]) assert.ok(labels.includes(node), `${node} in ${labels}`);
    assert.match((await page.locator("#graph-source").textContent()) ?? "", /search --> answer/u);
    await screenshot(page, "playground-graph-diagram");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("Stop ends a run as stopped, not as an error", async () => {
    await pick("research");
    await page.fill("#settings-fields [name=depth]", "5");
    const answered = await page.locator(".turn.assistant").count();
    await page.fill("#prompt", "a long question");
    await page.press("#prompt", "Enter");
    const turn = page.locator(".turn.assistant").nth(answered);
    await turn.locator(".statuses li").first().waitFor();
    await page.click("#stop");
    await turn.and(page.locator(":not(.pending)")).waitFor();
    assert.equal(await turn.locator(".stopped").textContent(), "stopped");
    assert.equal(await turn.locator(".error").count(), 0);
    assert.equal(((await turn.getAttribute("class")) ?? "").includes("failed"), false);
    await screenshot(page, "playground-stopped");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });

  test("tools: a tool call is shown with its arguments, and its result goes back as a tool message", async () => {
    await pick("tools");
    await say("What is the weather in Berlin?");
    const card = lastAnswer().locator(".tool-call");
    assert.equal(await card.locator(".call-title").textContent(), "Tool call: get_weather");
    assert.deepEqual(JSON.parse((await card.locator(".payload").textContent()) ?? ""), { city: "Berlin" });
    await card.locator("textarea").fill("sunny, 21 °C");
    const answered = await page.locator(".turn.assistant").count();
    await lastAnswer().locator(".answer-send").click();
    await page.locator(".turn.assistant").nth(answered).and(page.locator(":not(.pending)")).waitFor();
    assert.equal(await lastAnswer().locator(".content").textContent(), "The weather tool says: sunny, 21 °C");
    await screenshot(page, "playground-tools");
    assert.deepEqual(problems, { requests: [], errors: [] });
  });
});
