import { graph as approval } from "../../demo/graphs/approval.js";
import { graph as echo } from "../../demo/graphs/echo.js";
import { graph as memory } from "../../demo/graphs/memory.js";
import { ResearchSettings, graph as research } from "../../demo/graphs/research.js";
import { graph as think } from "../../demo/graphs/think.js";
import { graph as tools } from "../../demo/graphs/tools.js";
import { InMemoryRunCoordinator } from "../../src/coordination/in-memory-run-coordinator.js";
import { GraphFeature } from "../../src/registry/features.js";
import type { GraphConfigInput } from "../../src/registry/graph-config.js";

/** The demo models every surface serves, registered as the repository's config registers them. */
export function demoGraphs(): Record<string, GraphConfigInput> {
  return {
    echo: { graph: echo, description: "Echo", streamableNodeNames: ["respond"] },
    memory: { graph: memory, description: "Remembers", threads: true },
    think: { graph: think, description: "Thinks", streamableNodeNames: ["think"] },
    tools: { graph: tools, description: "Tools", streamableNodeNames: ["agent"] },
    research: {
      graph: research,
      description: "Researches",
      streamableNodeNames: ["answer"],
      features: [GraphFeature.CLIENT_EVENTS],
      clientSettings: ResearchSettings,
    },
    approval: {
      graph: approval,
      description: "Asks first",
      features: [GraphFeature.INTERRUPTS],
      runCoordinator: new InMemoryRunCoordinator(),
    },
  };
}
