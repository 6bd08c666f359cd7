import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

/** The package managers a project may be installed with. */
export type PackageManager = "npm" | "yarn" | "pnpm" | "bun";

const LOCKFILES: [string, PackageManager][] = [
  ["pnpm-lock.yaml", "pnpm"],
  ["yarn.lock", "yarn"],
  ["bun.lock", "bun"],
  ["bun.lockb", "bun"],
  ["package-lock.json", "npm"],
];

/**
 * The package manager a project uses: its package.json's `packageManager` (Corepack's field),
 * else its lockfile (in its folder or a workspace root above it), else the one running this
 * command (`npm_config_user_agent`), else npm.
 */
export function packageManagerOf(dir: string, userAgent = process.env.npm_config_user_agent): PackageManager {
  try {
    const declared = (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { packageManager?: unknown }).packageManager;
    const name = typeof declared === "string" ? declared.split("@")[0] : undefined;
    if (name === "npm" || name === "yarn" || name === "pnpm" || name === "bun") return name;
  } catch {
    // No package.json, or not JSON: the lockfile says.
  }
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    const found = LOCKFILES.find(([file]) => existsSync(path.join(at, file)));
    if (found !== undefined) return found[1];
    if (path.dirname(at) === at) break;
  }
  const running = userAgent?.split("/")[0];
  return running === "yarn" || running === "pnpm" || running === "bun" ? running : "npm";
}

/** The commands that install a project's dependencies, add packages and run a bin or a script, with this manager. */
export function commandsOf(manager: PackageManager): {
  install: string;
  add: (packages: string[]) => string;
  exec: (bin: string) => string;
  run: (script: string) => string;
} {
  switch (manager) {
    case "yarn":
      return {
        install: "yarn install",
        add: (p) => `yarn add ${p.join(" ")}`,
        exec: (bin) => `yarn ${bin}`,
        run: (script) => `yarn ${script}`,
      };
    case "pnpm":
      return {
        install: "pnpm install",
        add: (p) => `pnpm add ${p.join(" ")}`,
        exec: (bin) => `pnpm exec ${bin}`,
        run: (script) => `pnpm ${script}`,
      };
    case "bun":
      return {
        install: "bun install",
        add: (p) => `bun add ${p.join(" ")}`,
        exec: (bin) => `bunx ${bin}`,
        run: (script) => `bun run ${script}`,
      };
    default:
      return {
        install: "npm install",
        add: (p) => `npm install ${p.join(" ")}`,
        exec: (bin) => `npx ${bin}`,
        run: (script) => `npm ${script === "test" ? "test" : `run ${script}`}`,
      };
  }
}
