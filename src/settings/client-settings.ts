import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { InvalidClientSettingsError } from "../errors/catalogue.js";
import { ClientSettingsDefinitionError } from "../errors/developer-errors.js";
import { describeFirstIssue } from "../util/describe-issue.js";
import { deepFreeze, jsonProblem } from "../util/json-values.js";
import type { ClientSettingsDescriptor } from "../wire/response.js";
import { representationProblem, structureProblem } from "./inspect-schema.js";

const SETTINGS_BRAND = Symbol.for("chat-serve.ClientSettings");
const SETTINGS_METADATA_KEY = "graph_runtime_settings";
const SETTINGS_SCHEMA_VERSION = 1;

interface Inspected<T> {
  defaults: T;
  jsonSchema: Record<string, unknown>;
}

/**
 * What the service needs of a settings model. Structural, so a model made by another copy
 * of this package (the user's import) fits too.
 */
export interface ClientSettingsModel {
  readonly schema: z.ZodObject;
  inspect(): { defaults: Record<string, unknown>; jsonSchema: Record<string, unknown> };
  defaults(): Record<string, unknown>;
  descriptor(): ClientSettingsDescriptor;
  validateRequest(
    request: { metadata?: Record<string, string> | null },
    preset?: Readonly<Record<string, unknown>>,
  ): Readonly<Record<string, unknown>>;
}

/**
 * The public settings of one graph: a strict zod object whose every field has a
 * JSON-serializable default. Clients send the values they change as one compact JSON
 * object in `metadata.graph_runtime_settings`; the validated, frozen result is the run's
 * runtime context (or the input of its `contextFactory`).
 */
export class ClientSettings<Schema extends z.ZodObject = z.ZodObject, T extends Record<string, unknown> = z.output<Schema>>
  implements ClientSettingsModel
{
  readonly [SETTINGS_BRAND] = true;
  /** The strict zod object; also the graph's context schema when there is no context factory. */
  readonly schema: Schema;
  #inspected: Inspected<T> | undefined;
  /** A preset's settings, validated once: a request that sends none gets the same frozen object. */
  readonly #presets = new WeakMap<object, Readonly<T>>();

  constructor(schema: Schema) {
    this.schema = schema;
  }

  /** True for a settings model, including one made by another copy of this package. */
  static isClientSettings(value: unknown): value is ClientSettingsModel {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[SETTINGS_BRAND] === true;
  }

  /**
   * Checks the model once: strict, no coercion, JSON-representable, every field defaulted,
   * defaults valid and unchanged by a JSON round trip. Throws ClientSettingsDefinitionError.
   */
  inspect(): Inspected<T> {
    if (this.#inspected !== undefined) return this.#inspected;
    const structure = structureProblem(this.schema);
    if (structure !== null) throw new ClientSettingsDefinitionError(structure);
    const parsed = this.schema.safeParse({}) as z.ZodSafeParseResult<T>;
    if (!parsed.success) {
      throw new ClientSettingsDefinitionError(`every field needs a valid default: ${describeFirstIssue(parsed.error)}`);
    }
    for (const key of Object.keys(this.schema.shape)) {
      if (parsed.data[key] === undefined) {
        throw new ClientSettingsDefinitionError(`field '${key}' needs a default (optional fields are not allowed)`);
      }
    }
    const notJson = jsonProblem(parsed.data);
    if (notJson !== null) throw new ClientSettingsDefinitionError(`the defaults must be JSON: ${notJson}`);
    const representation = representationProblem(this.schema);
    if (representation !== null) throw new ClientSettingsDefinitionError(representation);
    // zod returns a `.default()` value without validating it, so validate the defaults here.
    const revalidated = this.schema.safeParse(parsed.data);
    if (!revalidated.success) {
      throw new ClientSettingsDefinitionError(`every field needs a valid default: ${describeFirstIssue(revalidated.error)}`);
    }
    const roundTripped = this.schema.safeParse(JSON.parse(JSON.stringify(parsed.data)));
    if (!roundTripped.success || !isDeepStrictEqual(roundTripped.data, parsed.data)) {
      throw new ClientSettingsDefinitionError("the defaults change when sent through JSON and validated again");
    }
    const jsonSchema = z.toJSONSchema(this.schema, { io: "input", unrepresentable: "throw" }) as Record<string, unknown>;
    this.#inspected = { defaults: deepFreeze(parsed.data), jsonSchema: deepFreeze(jsonSchema) };
    return this.#inspected;
  }

  /** A deep copy of the validated defaults. */
  defaults(): T {
    return structuredClone(this.inspect().defaults) as T;
  }

  /** The discovery JSON Schema (`additionalProperties: false`; `default` keywords are annotations). */
  get jsonSchema(): Record<string, unknown> {
    return this.inspect().jsonSchema;
  }

  /** What model retrieval advertises. */
  descriptor(): ClientSettingsDescriptor {
    const { defaults, jsonSchema } = this.inspect();
    return {
      schema_version: SETTINGS_SCHEMA_VERSION,
      json_schema: structuredClone(jsonSchema),
      defaults: structuredClone(defaults),
    };
  }

  /**
   * Reads `metadata.graph_runtime_settings` (a JSON object of the values that differ from
   * the defaults), merges it over the defaults (and a model preset's settings) and validates
   * strictly. Returns a frozen instance; throws InvalidClientSettingsError naming the field.
   */
  validateRequest(request: { metadata?: Record<string, string> | null }, preset: Readonly<Record<string, unknown>> = {}): Readonly<T> {
    const text = request.metadata?.[SETTINGS_METADATA_KEY];
    const known = text === undefined ? this.#presets.get(preset) : undefined;
    if (known !== undefined) return known;
    // A model preset's settings replace the defaults; what the request sends replaces both.
    const defaults = { ...structuredClone(this.inspect().defaults), ...structuredClone(preset) };
    if (text === undefined) {
      if (Object.keys(preset).length === 0) return deepFreeze(defaults as T);
      const result = this.schema.safeParse(defaults) as z.ZodSafeParseResult<T>;
      if (!result.success) throw new InvalidClientSettingsError(`Invalid preset settings: ${describeFirstIssue(result.error)}.`);
      const settings = deepFreeze(result.data);
      this.#presets.set(preset, settings);
      return settings;
    }
    let sent: unknown;
    try {
      sent = JSON.parse(text);
    } catch {
      throw new InvalidClientSettingsError(
        `metadata.${SETTINGS_METADATA_KEY} is not valid JSON; send the settings as one JSON object, e.g. {"depth":3}.`,
      );
    }
    if (sent === null || typeof sent !== "object" || Array.isArray(sent)) {
      throw new InvalidClientSettingsError(`metadata.${SETTINGS_METADATA_KEY} must be a JSON object of settings.`);
    }
    const notJson = jsonProblem(sent);
    if (notJson !== null) throw new InvalidClientSettingsError(`Invalid client settings: ${notJson}.`);
    const result = this.schema.safeParse({ ...defaults, ...sent }) as z.ZodSafeParseResult<T>;
    if (!result.success) {
      throw new InvalidClientSettingsError(`Invalid client settings: ${describeFirstIssue(result.error)}.`);
    }
    return deepFreeze(result.data);
  }
}

/**
 * Declares the public client settings of a graph from a strict zod object.
 *
 * @example
 * ```ts
 * export const ResearchSettings = defineClientSettings(
 *   z.strictObject({ depth: z.int().min(1).max(5).default(2) }),
 * );
 * const graph = new StateGraph(MessagesAnnotation, ResearchSettings.schema) // context schema
 * ```
 */
export function defineClientSettings<Schema extends z.ZodObject>(schema: Schema): ClientSettings<Schema> {
  return new ClientSettings(schema);
}
