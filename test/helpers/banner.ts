import { banner } from "../../src/cli/banner.js";

/** The start banner of a loopback server on port 8000, with `extra` (what a test looks at). */
export function loopbackBanner(extra: Partial<Parameters<typeof banner>[0]>): string {
  return banner({
    address: "http://127.0.0.1:8000",
    prefix: "/v1",
    host: "127.0.0.1",
    surfaces: [],
    offNotes: [],
    metrics: undefined,
    chatUiPrefix: undefined,
    firstModel: undefined,
    store: { kind: "memory", expireAfter: "30d" },
    background: { kind: "unavailable", reason: "" } as never,
    auth: false,
    ...extra,
  });
}
