import type { Surface } from "../../http/surface.js";
import { registerModelRoutes } from "./models-routes.js";

/** The OpenAI model list: `GET /models` and `GET /models/{model}`, `created` when it was mounted. */
export function modelsSurface(): Surface {
  const created = Math.floor(Date.now() / 1000);
  return {
    name: "models",
    register: (app, context) => registerModelRoutes(app, context.registry, created),
    methods: { "/models": ["GET"], "/models/*": ["GET"] },
    apiLabels: { "/models": "models", "/models/*": "models" },
  };
}
