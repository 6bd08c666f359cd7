import { z } from "zod";

// The OpenAI request parameters that reach the graph, as each API spells them. Both APIs'
// forms are normalised into one `RequestParameters` object by the dialects.

/** `reasoning_effort` (chat) and `reasoning.effort` (Responses). */
export const reasoningEffortSchema = z.enum(["none", "minimal", "low", "medium", "high", "xhigh"], {
  error: (issue) => `must be one of none, minimal, low, medium, high, xhigh (got ${JSON.stringify(issue.input)})`,
});

/** `reasoning.summary` (Responses). */
const reasoningSummarySchema = z.enum(["auto", "concise", "detailed"], {
  error: (issue) => `must be one of auto, concise, detailed (got ${JSON.stringify(issue.input)})`,
});

/** The Responses `reasoning` object. `generate_summary` is the older name of `summary`. */
export const reasoningParamSchema = z.strictObject({
  effort: reasoningEffortSchema.nullish(),
  summary: reasoningSummarySchema.nullish(),
  generate_summary: reasoningSummarySchema.nullish(),
});

const formatName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/u, "must be 1-64 letters, digits, underscores or dashes");
const jsonSchemaObject = z.record(z.string(), z.unknown(), "must be a JSON Schema object");

// The two formats both APIs spell alike; only json_schema's fields sit differently.
const textFormat = z.strictObject({ type: z.literal("text") });
const jsonObjectFormat = z.strictObject({ type: z.literal("json_object") });
const formatTypeError = { error: () => "type must be one of text, json_object, json_schema" };

/** Chat completions' `response_format`. */
export const responseFormatSchema = z.discriminatedUnion(
  "type",
  [
    textFormat,
    jsonObjectFormat,
    z.strictObject({
      type: z.literal("json_schema"),
      json_schema: z.strictObject({
        name: formatName,
        description: z.string().optional(),
        schema: jsonSchemaObject.optional(),
        strict: z.boolean().nullish(),
      }),
    }),
  ],
  formatTypeError,
);

/** The Responses API's `text.format`. */
export const textFormatSchema = z.discriminatedUnion(
  "type",
  [
    textFormat,
    jsonObjectFormat,
    z.strictObject({
      type: z.literal("json_schema"),
      name: formatName,
      description: z.string().nullish(),
      schema: jsonSchemaObject,
      strict: z.boolean().nullish(),
    }),
  ],
  formatTypeError,
);

export type ReasoningEffort = z.infer<typeof reasoningEffortSchema>;
export type ReasoningSummary = z.infer<typeof reasoningSummarySchema>;

/** The format a client asked the answer in. */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean };

/** A function tool the client offers the model, the same on both APIs. */
export interface ClientTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

/**
 * The OpenAI request parameters of one run, parsed once, validated and normalised across the
 * two APIs: `max_tokens`, `max_completion_tokens` and `max_output_tokens` are all `maxTokens`,
 * `response_format` and `text.format` are both `responseFormat`, `reasoning_effort` and
 * `reasoning` are both `reasoning`. A field is present only when the client sent it.
 */
export interface RequestParameters {
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseFormat?: ResponseFormat;
  reasoning?: { effort?: ReasoningEffort; summary?: ReasoningSummary };
  tools?: ClientTool[];
  toolChoice?: "none" | "auto" | "required" | { type: "function"; name: string };
  parallelToolCalls?: boolean;
}
