import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { launchChromium, requireChromium, screenshot, watchPage } from "../helpers/browser.js";
import { type RunningServer, startCli } from "../helpers/cli.js";

const chromium = requireChromium();

describe("the API docs in a real browser", { skip: chromium.skip }, () => {
  let server: RunningServer;
  let browser: Browser;

  before(async () => {
    server = await startCli([], { env: { SVC_CHAT_API_DOCS_ENABLED: "true" } });
    browser = await launchChromium(chromium.executablePath);
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const [path, name] of [
    ["/docs", "docs"],
    ["/docs/", "docs-trailing-slash"],
  ] as const) {
    test(`Swagger UI renders at ${path} with every asset loaded from this server`, async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const problems = watchPage(page, new URL(server.baseURL).origin);
      await page.goto(`${server.baseURL}${path}`);
      await page.locator(".swagger-ui .info .title").waitFor();
      assert.match((await page.locator(".swagger-ui .info .title").textContent()) ?? "", /chat-serve/u);
      const operations = await page.locator(".opblock-summary-path").allTextContents();
      for (const operation of ["/chat/completions", "/responses", "/models", "/models/{model}"]) {
        assert.ok(operations.includes(operation), `${operation} in ${operations}`);
      }
      await screenshot(page, `api-${name}`);
      assert.deepEqual(problems, { requests: [], errors: [] });
      await page.close();
    });
  }

  test("Try it out on /chat/completions sends the example, which the server answers", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const problems = watchPage(page, new URL(server.baseURL).origin);
    await page.goto(`${server.baseURL}/docs`);
    const operation = page.locator(".opblock-post", { has: page.locator(".opblock-summary-path", { hasText: /^\/chat\/completions$/u }) });
    await operation.locator(".opblock-summary").click();
    await operation.getByRole("button", { name: "Try it out" }).click();
    await operation.getByRole("button", { name: "Execute" }).click();
    const body = operation.locator(".live-responses-table .response-col_description .microlight").first();
    await body.waitFor();
    const answer = JSON.parse((await body.textContent()) ?? "");
    assert.equal(answer.object, "chat.completion");
    assert.equal(answer.model, "echo");
    assert.equal(answer.choices[0].message.content, "hello there");
    await screenshot(page, "api-docs-try-it-out");
    assert.deepEqual(problems, { requests: [], errors: [] });
    await page.close();
  });

  test("Redoc renders at /redoc from its package", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = watchPage(page, new URL(server.baseURL).origin);
    await page.goto(`${server.baseURL}/redoc`);
    await page.locator(".api-info h1").waitFor();
    assert.match((await page.locator(".api-info h1").textContent()) ?? "", /chat-serve/u);
    const menu = (await page.locator(".menu-content").textContent()) ?? "";
    for (const summary of [
      "Run a graph as a chat completion",
      "Run a graph as a response (the Responses API)",
      "List the graphs served as models",
    ]) {
      assert.ok(menu.includes(summary), `${summary} in the menu`);
    }
    await screenshot(page, "api-redoc");
    // The bundle's one remote asset, a logo on Redocly's CDN, is served by chat-serve instead:
    // no request leaves the server's origin, and none is refused.
    assert.deepEqual(problems, { requests: [], errors: [] });
    const logo = page.locator('img[alt="redocly logo"]');
    // Relative to the page, so that it holds under a host's mount path too.
    assert.equal(new URL((await logo.getAttribute("src")) ?? "", page.url()).pathname, "/v1/redoc/logo-mini.svg");
    assert.ok(((await logo.evaluate((image: { naturalWidth: number }) => image.naturalWidth)) as number) > 0, "the logo loads");
    await page.close();
  });
});
