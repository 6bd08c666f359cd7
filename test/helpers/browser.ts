import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { type Browser, chromium, type Page } from "playwright-core";

/** Where screenshots go, for a person to look at after a run. */
export const RESULTS_DIR = fileURLToPath(new URL("../../test-results/", import.meta.url));

const CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/**
 * Debian's Chromium, or `CHROMIUM_PATH`. Missing: with CI=true the test file fails (CI must
 * not pass by skipping); elsewhere the tests skip with a one-line reason.
 */
export function requireChromium(): { skip: string | false; executablePath: string } {
  const executablePath = CANDIDATES.find((candidate) => candidate !== undefined && candidate !== "" && existsSync(candidate));
  if (executablePath !== undefined) return { skip: false, executablePath };
  const reason = "Chromium is not installed (apt-get install -y chromium, or set CHROMIUM_PATH)";
  if (process.env.CI === "true") throw new Error(`CI=true and ${reason}`);
  return { skip: reason, executablePath: "" };
}

/**
 * Headless Chromium with a fresh profile, kept off the network it cannot reach anyway
 * (background networking, component updates, sync).
 */
export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
  });
}

export interface PageProblems {
  /** Requests that failed or answered 4xx/5xx, and any to another origin. */
  requests: string[];
  /** Uncaught page errors and console errors. */
  errors: string[];
}

/** Records what went wrong on a page: failed or foreign requests, script errors. */
export function watchPage(page: Page, origin: string): PageProblems {
  const problems: PageProblems = { requests: [], errors: [] };
  page.on("requestfailed", (request) => {
    // A stream the page stops on purpose is not a failure of the page.
    if (request.failure()?.errorText !== "net::ERR_ABORTED")
      problems.requests.push(`${request.url()} failed: ${request.failure()?.errorText}`);
  });
  page.on("request", (request) => {
    if (!request.url().startsWith(origin) && !request.url().startsWith("data:") && !request.url().startsWith("blob:")) {
      problems.requests.push(`${request.url()} is not on ${origin}`);
    }
  });
  page.on("response", (response) => {
    if (response.status() >= 400) problems.requests.push(`${response.url()} answered ${response.status()}`);
  });
  page.on("pageerror", (error) => problems.errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") problems.errors.push(message.text());
  });
  return problems;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A test page: its script (a JSX entry, resolved from `base`) bundled for the browser, as an app bundles it, inlined. */
export async function bundlePage(entry: string, base: string, title: string): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(entry, base))],
    bundle: true,
    write: false,
    format: "esm",
    jsx: "automatic",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  const script = result.outputFiles[0]?.text ?? "";
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><div id="root"></div><script type="module">${script.replaceAll("</script", "<\\/script")}</script></body></html>`;
}

/**
 * A test page on the server's origin (the browser serves its HTML; its API calls go to
 * chat-serve), at `/{name}.html?{query}`, once its prompt is on the page.
 */
export async function openPage(
  browser: Browser,
  origin: string,
  page: { name: string; html: string; query: string },
): Promise<{ page: Page; problems: PageProblems }> {
  const opened = await browser.newPage();
  const problems = watchPage(opened, origin);
  await opened.route(`${origin}/${page.name}.html*`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: page.html }));
  await opened.goto(`${origin}/${page.name}.html?${page.query}`);
  await opened.locator("#prompt").waitFor();
  return { page: opened, problems };
}

/** Sends a prompt from a chat page and waits for the answer (`#messages li.{role}`) and an idle page. */
export async function sayOnPage(page: Page, text: string, answer: RegExp, role: string): Promise<void> {
  await page.fill("#prompt", text);
  await page.click("#send");
  await page.locator(`#messages li.${role}`, { hasText: answer }).waitFor({ timeout: 10_000 });
  await page.locator("#status", { hasText: "idle" }).waitFor();
}

/**
 * The `memory` demo on a chat page: two turns, the second remembering the first, the page
 * showing the four messages and no failed request or page error. Screenshot `name` either way.
 */
export async function rememberingConversation(opened: { page: Page; problems: PageProblems }, role: string, name: string): Promise<void> {
  const { page, problems } = opened;
  try {
    await sayOnPage(page, "apples", /This is the start of our conversation/u, role);
    await sayOnPage(page, "pears", /Before that you said: "apples"/u, role);
    assert.deepEqual(await page.locator("#messages li").allTextContents(), [
      "apples",
      'You said "apples". This is the start of our conversation.',
      "pears",
      'You said "pears". Before that you said: "apples".',
    ]);
    assert.deepEqual(problems, { requests: [], errors: [] });
  } finally {
    await screenshot(page, name);
    await page.close();
  }
}
