import type { GraphConfig } from "../../registry/graph-config.js";
import { RESUME_TOOL } from "./tool-names.js";

/** A tool as `tools/list` gives it. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: "object"; properties: Record<string, object>; required: string[]; additionalProperties: false };
  outputSchema: { type: "object"; properties: Record<string, object>; required: string[] };
}

/** What a model's tool was called with, checked. */
export interface ModelToolArguments {
  message: string;
  settings?: Record<string, unknown>;
  conversation?: string;
}

/** What the `resume` tool was called with, checked. */
export interface ResumeToolArguments {
  tool: string;
  runId: string;
  stateToken: string;
  answer: string;
}

/** Arguments that do not fit a tool's input schema: said as the tool's error, naming the field. */
export class ToolArgumentsError extends Error {}

const text = (description: string) => ({ type: "string", description });

/** The `structuredContent` of every tool's result: the answer, a paused run, or a failure. */
const OUTPUT_SCHEMA: McpTool["outputSchema"] = {
  type: "object",
  properties: {
    status: {
      type: "string",
      enum: ["completed", "incomplete", "interrupted", "failed"],
      description: "completed; incomplete (cut short by a token limit); interrupted (the graph asks a question); failed.",
    },
    text: text("The answer."),
    citations: {
      type: "array",
      description: "The sources the answer cites; each is also a resource_link in the content.",
      items: {
        type: "object",
        properties: {
          url: { type: "string" },
          title: { type: "string" },
          start_index: { type: "integer" },
          end_index: { type: "integer" },
        },
        required: ["url", "title", "start_index", "end_index"],
      },
    },
    usage: {
      type: ["object", "null"],
      description: "The tokens the graph's models used, when they reported them.",
      properties: { input_tokens: { type: "integer" }, output_tokens: { type: "integer" }, total_tokens: { type: "integer" } },
    },
    tool_calls: {
      type: "array",
      description: "Tools the graph asks its caller to run (the graph stops there).",
      items: { type: "object", properties: { name: { type: "string" }, arguments: {} }, required: ["name", "arguments"] },
    },
    interrupt: {
      type: "object",
      description: `A paused run: answer it with the ${RESUME_TOOL} tool, giving tool, run_id and state_token.`,
      properties: {
        tool: { type: "string" },
        run_id: { type: "string" },
        state_token: { type: "string" },
        questions: {
          type: "array",
          items: {
            type: "object",
            properties: { question: { type: "string" }, options: { type: "array", items: { type: "string" } }, payload: {} },
            required: ["question", "payload"],
          },
        },
      },
      required: ["tool", "run_id", "state_token", "questions"],
    },
    error: {
      type: "object",
      description: "Why the run failed, as the OpenAI APIs say it.",
      properties: {
        message: { type: "string" },
        type: { type: "string" },
        code: { type: ["string", "null"] },
        param: { type: ["string", "null"] },
      },
      required: ["message", "type"],
    },
  },
  required: ["status", "text"],
};

/** A model's client settings as a property of its tool's input: their JSON Schema, without `$schema`. */
function settingsProperty(config: GraphConfig): object | undefined {
  if (config.clientSettings === undefined) return undefined;
  const { $schema: _schema, ...schema } = structuredClone(config.clientSettings.inspect().jsonSchema);
  const preset = config.presetSettings === undefined ? "" : ` This model presets ${JSON.stringify(config.presetSettings)}.`;
  return { ...schema, description: `The model's client settings; leave out what should keep its default.${preset}` };
}

/** The tool of one model: its message, its client settings when it has some, and a conversation to continue. */
export function modelTool(name: string, model: string, config: GraphConfig): McpTool {
  const settings = settingsProperty(config);
  return {
    name,
    title: model,
    description: config.description,
    inputSchema: {
      type: "object",
      properties: {
        message: { type: "string", minLength: 1, description: "Your message to the model." },
        ...(settings === undefined ? {} : { settings }),
        conversation: text(
          "A conversation to continue (its ID, conv_…, from the Conversations API): the model sees its earlier turns, and this turn is added to it.",
        ),
      },
      required: ["message"],
      additionalProperties: false,
    },
    outputSchema: OUTPUT_SCHEMA,
  };
}

/** The tool that answers a paused run, for clients that cannot answer a question inside the call. */
export const RESUME_TOOL_DEFINITION: McpTool = {
  name: RESUME_TOOL,
  title: "Answer a paused run",
  description:
    "Answers the question a tool asked when its run paused (status 'interrupted'), and lets the run go on. Give the interrupt's tool, run_id and state_token unchanged, and your answer.",
  inputSchema: {
    type: "object",
    properties: {
      tool: text("The tool whose run paused (interrupt.tool)."),
      run_id: text("interrupt.run_id, unchanged."),
      state_token: text("interrupt.state_token, unchanged."),
      answer: text("Your answer. For several questions, answer each on its own line, numbered like the questions."),
    },
    required: ["tool", "run_id", "state_token", "answer"],
    additionalProperties: false,
  },
  outputSchema: OUTPUT_SCHEMA,
};

function argumentsObject(args: unknown): Record<string, unknown> {
  if (args === undefined) return {};
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw new ToolArgumentsError("The arguments must be an object.");
  return args as Record<string, unknown>;
}

function assertKnown(args: Record<string, unknown>, tool: McpTool): void {
  const known = Object.keys(tool.inputSchema.properties);
  const unknown = Object.keys(args).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    throw new ToolArgumentsError(`Unknown argument '${unknown}': ${tool.name} takes ${known.join(", ")}.`);
  }
}

function requiredText(args: Record<string, unknown>, key: string): string {
  const value = args[key];
  if (value === undefined) throw new ToolArgumentsError(`The argument '${key}' is required.`);
  if (typeof value !== "string" || value.trim() === "") throw new ToolArgumentsError(`The argument '${key}' must be a non-empty string.`);
  return value;
}

/** A model tool's arguments, checked against its input schema; the settings are checked by the run. */
export function readModelArguments(tool: McpTool, raw: unknown): ModelToolArguments {
  const args = argumentsObject(raw);
  assertKnown(args, tool);
  const message = requiredText(args, "message");
  const { settings, conversation } = args;
  if (settings !== undefined && (typeof settings !== "object" || settings === null || Array.isArray(settings))) {
    throw new ToolArgumentsError("The argument 'settings' must be an object.");
  }
  if (conversation !== undefined && (typeof conversation !== "string" || conversation === "")) {
    throw new ToolArgumentsError("The argument 'conversation' must be a conversation ID (conv_…).");
  }
  return {
    message,
    ...(settings === undefined ? {} : { settings: settings as Record<string, unknown> }),
    ...(conversation === undefined ? {} : { conversation: conversation as string }),
  };
}

/** The `resume` tool's arguments, checked. */
export function readResumeArguments(raw: unknown): ResumeToolArguments {
  const args = argumentsObject(raw);
  assertKnown(args, RESUME_TOOL_DEFINITION);
  return {
    tool: requiredText(args, "tool"),
    runId: requiredText(args, "run_id"),
    stateToken: requiredText(args, "state_token"),
    answer: requiredText(args, "answer"),
  };
}
