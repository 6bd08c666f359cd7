import { loadConfig } from "../src/config/load-config.js";

process.chdir("test/fixtures/generative-ui-project");
const loaded = await loadConfig({});
const { uiBundlesFromConfig } = await import("../src/server/ui-bundles.js");
const b = await uiBundlesFromConfig(loaded);
console.log(new TextDecoder().decode(b!.get("agent")![0]!.contents));
