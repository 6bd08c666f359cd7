#!/usr/bin/env node
// A shim: check the Node version, then hand over to the compiled CLI.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  process.stderr.write(`chat-serve needs Node.js 20.19 or newer; this is ${process.versions.node}.\n`);
  process.exit(1);
}
const { main } = await import("../dist/cli/main.js");
await main();
