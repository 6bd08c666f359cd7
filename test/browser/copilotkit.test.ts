import assert from "node:assert/strict";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import type { Browser, Page } from "playwright-core";
import { launchChromium, type PageProblems, requireChromium, screenshot, watchPage } from "../helpers/browser.js";
import { type RunningServer, startCli } from "../helpers/cli.js";

// CopilotKit as its users run it: its Copilot Runtime (`@copilotkit/runtime`, in Node) in front
// of chat-serve, with a LangGraph agent (`@ag-ui/langgraph`, on the Agent Protocol) and an AG-UI
// `HttpAgent` (on chat-serve's AG-UI endpoint); its React provider and chat (`react-core`,
// `react-ui`) in Chromium. Installed in test/clients (pinned, test-only; .ci/run installs it).

const chromium = requireChromium();
const CLIENTS = fileURLToPath(new URL("../clients/", import.meta.url));
const installed = existsSync(`${CLIENTS}node_modules/@copilotkit/runtime/package.json`);
if (!installed && process.env.CI === "true") throw new Error("CI=true and CopilotKit is not installed: run `npm ci --prefix test/clients`");
const skip = chromium.skip || (installed ? false : "CopilotKit is not installed: run `npm ci --prefix test/clients`");

/** A package of test/clients, imported from there. */
const fromClients = (specifier: string) => import(pathToFileURL(`${CLIENTS}node_modules/${specifier}`).href);

/** The page, bundled as a CopilotKit app bundles it (its styles with it), as one HTML document. */
async function bundleApp(): Promise<string> {
  const result = await build({
    entryPoints: [`${CLIENTS}copilotkit/page.jsx`],
    bundle: true,
    write: false,
    outdir: "/bundle",
    format: "esm",
    jsx: "automatic",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
    loader: { ".woff": "dataurl", ".woff2": "dataurl", ".ttf": "dataurl", ".svg": "dataurl" },
    logLevel: "silent",
  });
  const of = (extension: string) => result.outputFiles.find((file) => file.path.endsWith(extension))?.text ?? "";
  const script = of(".js").replaceAll("</script", "<\\/script");
  return `<!doctype html><html><head><meta charset="utf-8"><title>CopilotKit</title><style>${of(".css")}</style></head><body><div id="root"></div><script type="module">${script}</script></body></html>`;
}

let chatServe: RunningServer;
let runtime: Server;
let origin: string;
let browser: Browser;
let html: string;

before(async () => {
  if (skip) return;
  process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
  [chatServe, html] = await Promise.all([startCli([]), bundleApp()]);
  const api = new URL(chatServe.baseURL);
  const [{ CopilotRuntime, createCopilotRuntimeHandler }, { createCopilotNodeHandler }, { LangGraphAgent }, { HttpAgent }] =
    await Promise.all([
      fromClients("@copilotkit/runtime/dist/v2/index.mjs"),
      fromClients("@copilotkit/runtime/dist/v2/node.mjs"),
      fromClients("@ag-ui/langgraph/dist/index.mjs"),
      fromClients("@ag-ui/client/dist/index.mjs"),
    ]);
  const langgraph = (graphId: string) => new LangGraphAgent({ deploymentUrl: api.origin, graphId });
  const agUi = (model: string) => new HttpAgent({ url: `${api.origin}${api.pathname}/ag-ui/${model}` });
  const copilot = new CopilotRuntime({
    agents: {
      memory: langgraph("memory"),
      approval: langgraph("approval"),
      research: langgraph("research"),
      "ag-ui-memory": agUi("memory"),
      "ag-ui-approval": agUi("approval"),
    },
  });
  const handler = createCopilotNodeHandler(
    createCopilotRuntimeHandler({ runtime: copilot, basePath: "/copilotkit", activateChannels: false }),
  );
  runtime = createServer((request, response) => void handler(request, response));
  runtime.listen(0, "127.0.0.1");
  await once(runtime, "listening");
  origin = `http://127.0.0.1:${(runtime.address() as AddressInfo).port}`;
  browser = await launchChromium(chromium.executablePath);
});
after(async () => {
  await browser?.close();
  if (runtime !== undefined) await new Promise((resolve) => runtime.close(resolve));
  await chatServe?.stop();
});

/** The app with one agent, once its chat input is on the page. */
async function open(agent: string): Promise<{ page: Page; problems: PageProblems }> {
  const page = await browser.newPage();
  const problems = watchPage(page, origin);
  await page.route(`${origin}/app.html*`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: html }));
  await page.goto(`${origin}/app.html?agent=${agent}`);
  await page.locator(".copilotKitInput textarea").waitFor({ timeout: 15_000 });
  return { page, problems };
}

/** Says something in CopilotKit's chat and waits for the assistant's answer. */
async function say(page: Page, text: string, answer: RegExp): Promise<void> {
  const input = page.locator(".copilotKitInput textarea");
  await input.fill(text);
  await input.press("Enter");
  await page.locator(".copilotKitAssistantMessage", { hasText: answer }).waitFor({ timeout: 15_000 });
}

const assistantTexts = (page: Page) => page.locator(".copilotKitAssistantMessage").allInnerTexts();

for (const [title, prefix] of [
  ["a LangGraph agent on the Agent Protocol", ""],
  ["an AG-UI HttpAgent", "ag-ui-"],
] as const) {
  describe(`CopilotKit with ${title}, in a real browser`, { skip }, () => {
    test("a streamed answer, and a second turn that remembers the first", async () => {
      const { page, problems } = await open(`${prefix}memory`);
      try {
        await say(page, "apples", /You said "apples"\. This is the start of our conversation\./u);
        await say(page, "pears", /You said "pears"\. Before that you said: "apples"\./u);
        assert.equal((await assistantTexts(page)).length, 2);
        assert.deepEqual(problems, { requests: [], errors: [] });
      } finally {
        await screenshot(page, `copilotkit-${prefix}memory`);
        await page.close();
      }
    });

    test("an approval asked on the page and answered from it", async () => {
      const { page, problems } = await open(`${prefix}approval`);
      try {
        const input = page.locator(".copilotKitInput textarea");
        await input.fill("deploy");
        await input.press("Enter");
        await page.locator("#question", { hasText: "May I go ahead with: deploy?" }).waitFor({ timeout: 15_000 });
        await page.click("#approve");
        await page.locator(".copilotKitAssistantMessage", { hasText: "Approved: going ahead with deploy." }).waitFor({ timeout: 15_000 });
        assert.deepEqual(problems, { requests: [], errors: [] });
      } finally {
        await screenshot(page, `copilotkit-${prefix}approval`);
        await page.close();
      }
    });
  });
}

test("CopilotKit's LangGraph agent: research with no context gets its settings' defaults", { skip }, async () => {
  const { page, problems } = await open("research");
  try {
    await say(page, "What is LangGraph?", /I looked at 2 sources about What is LangGraph and explain it in plain words\./u);
    assert.deepEqual(problems, { requests: [], errors: [] });
  } finally {
    await screenshot(page, "copilotkit-research");
    await page.close();
  }
});
