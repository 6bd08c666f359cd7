import { createRequire } from "node:module";
import type { Ajv2020 as Ajv2020Type } from "ajv/dist/2020.js";
import { InvalidRequestError } from "../errors/catalogue.js";
import type { RequestParameters } from "./request-parameters.js";

/** How each API names the fields the checks point at. */
export interface ParameterPaths {
  toolName: (index: number) => string;
  toolChoice: string;
  schema: string;
}

const require = createRequire(import.meta.url);
const DRAFT_07 = "http://json-schema.org/draft-07/schema";

/**
 * Checks a schema against the JSON Schema meta-schemas (2020-12, or draft-07 when it says so),
 * without compiling it: the schema comes from a client, and compiling untrusted schemas is
 * what a validator warns against. ajv loads only when a request has a schema to check.
 */
class SchemaChecker {
  #ajv: Ajv2020Type | undefined;

  problem(schema: Record<string, unknown>): string | undefined {
    if (this.#ajv === undefined) {
      const { Ajv2020 } = require("ajv/dist/2020") as typeof import("ajv/dist/2020.js");
      this.#ajv = new Ajv2020({ strict: false, validateSchema: false });
      this.#ajv.addMetaSchema(require("ajv/dist/refs/json-schema-draft-07.json") as object);
    }
    const declared = typeof schema.$schema === "string" ? schema.$schema.replace(/#$/u, "") : undefined;
    const meta = declared === DRAFT_07 ? DRAFT_07 : "https://json-schema.org/draft/2020-12/schema";
    const validate = this.#ajv.getSchema(meta);
    if (validate === undefined || validate(schema)) return undefined;
    const first = validate.errors?.[0];
    return first === undefined ? "it does not match the meta-schema" : `schema${first.instancePath.replaceAll("/", ".")} ${first.message}`;
  }
}

const schemas = new SchemaChecker();

/**
 * The checks no schema of a single field can make: tool names are unique, a named
 * `tool_choice` names one of the tools, and a JSON schema format holds valid JSON Schema.
 */
export function checkParameters(parameters: RequestParameters, paths: ParameterPaths): void {
  // Most requests bring no tools and no format: nothing to check.
  if (parameters.tools === undefined && parameters.toolChoice === undefined && parameters.responseFormat === undefined) return;
  const names = new Set<string>();
  (parameters.tools ?? []).forEach((tool, index) => {
    if (names.has(tool.name)) {
      throw new InvalidRequestError(`Two tools are named '${tool.name}'; tool names must be unique.`, { param: paths.toolName(index) });
    }
    names.add(tool.name);
  });
  const choice = parameters.toolChoice;
  if (typeof choice === "object" && !names.has(choice.name)) {
    throw new InvalidRequestError(`tool_choice names the function '${choice.name}', which is not one of the tools.`, {
      param: paths.toolChoice,
    });
  }
  const format = parameters.responseFormat;
  if (format?.type === "json_schema" && format.schema !== undefined) {
    const problem = schemas.problem(format.schema);
    if (problem !== undefined) {
      throw new InvalidRequestError(`The response format's schema is not valid JSON Schema: ${problem}.`, { param: paths.schema });
    }
  }
}
