#!/usr/bin/env node
// A shim: check the Node version, then hand over to the compiled CLI.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`chat-serve needs Node.js 20.19 or newer; this is ${process.versions.node}.\n`);
  process.exit(1);
}
// Node 22.1 and newer keep V8's compiled code of every module in a cache folder (in the OS
// temp folder unless NODE_COMPILE_CACHE names one), so a second start skips compiling
// LangChain, LangGraph and the rest again. Node 20 has no such cache and skips this.
const { default: nodeModule } = await import("node:module");
nodeModule.enableCompileCache?.();
const cli = new URL("../dist/cli/main.js", import.meta.url);
let main;
try {
  ({ main } = await import(cli.href));
} catch (error) {
  if (error?.code === "ERR_MODULE_NOT_FOUND" && String(error.message).includes(cli.pathname)) {
    process.stderr.write("chat-serve is not built yet: run `npm run build` in its folder (npm install does it too).\n");
    process.exit(1);
  }
  throw error;
}
await main();
