import { Embeddings } from "@langchain/core/embeddings";
import { ConfigError } from "../errors/developer-errors.js";
import { firstLine } from "../errors/first-line.js";

/**
 * The semantic index of LangGraph's store (`langgraph.json`'s `store.index`, a config's
 * `graphStore.index`): how many dimensions, which fields of a value are embedded, and the
 * embeddings that turn text into vectors.
 */
export interface GraphStoreIndex {
  dims: number;
  fields?: string[];
  embeddings: Embeddings;
}

/** A project's own embedding function (`(texts) => vectors`), as LangChain's `Embeddings`. */
class FunctionEmbeddings extends Embeddings {
  readonly #embed: (texts: string[]) => Promise<number[][]> | number[][];

  constructor(embed: (texts: string[]) => Promise<number[][]> | number[][]) {
    super({});
    this.#embed = embed;
  }

  async embedDocuments(documents: string[]): Promise<number[][]> {
    return this.caller.call(async () => this.#embed(documents));
  }

  async embedQuery(document: string): Promise<number[]> {
    const [vector] = await this.embedDocuments([document]);
    if (vector === undefined) throw new Error("the embedding function returned no vector for the query");
    return vector;
  }
}

/** The LangChain packages and classes of the providers an `embed` string may name (`openai:text-embedding-3-small`). */
const PROVIDERS: Record<string, { package: string; className: string; modelKey: string }> = {
  openai: { package: "@langchain/openai", className: "OpenAIEmbeddings", modelKey: "model" },
  azure_openai: { package: "@langchain/openai", className: "AzureOpenAIEmbeddings", modelKey: "model" },
  cohere: { package: "@langchain/cohere", className: "CohereEmbeddings", modelKey: "model" },
  "google-genai": { package: "@langchain/google-genai", className: "GoogleGenerativeAIEmbeddings", modelKey: "model" },
  google_genai: { package: "@langchain/google-genai", className: "GoogleGenerativeAIEmbeddings", modelKey: "model" },
  "google-vertexai": { package: "@langchain/google-vertexai", className: "VertexAIEmbeddings", modelKey: "model" },
  mistralai: { package: "@langchain/mistralai", className: "MistralAIEmbeddings", modelKey: "model" },
  ollama: { package: "@langchain/ollama", className: "OllamaEmbeddings", modelKey: "model" },
  bedrock: { package: "@langchain/aws", className: "BedrockEmbeddings", modelKey: "model" },
};

/** True for `provider:model` (not a `./module.ts:export` reference). */
export function isProviderString(embed: string): boolean {
  return /^[a-z][a-z0-9_-]*:[^/\\]+$/u.test(embed) && !/\.(?:[cm]?[jt]s|tsx?)(?::|$)/u.test(embed);
}

/**
 * The embeddings a `provider:model` string names, made by that provider's LangChain class from
 * the project's own packages (`importFrom` resolves them where the config is).
 */
export async function providerEmbeddings(
  embed: string,
  where: string,
  importFrom: (specifier: string) => Promise<unknown>,
): Promise<Embeddings> {
  const [provider = "", ...rest] = embed.split(":");
  const model = rest.join(":");
  const known = PROVIDERS[provider];
  if (known === undefined) {
    throw new ConfigError(
      `${where}: '${provider}' is not a provider chat-serve knows (${Object.keys(PROVIDERS).join(", ")}); name a module that exports the embeddings instead ('./embed.ts:embeddings')`,
    );
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await importFrom(known.package)) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(
      `${where}: '${embed}' needs ${known.package}: run 'npm install ${known.package}' in the project (${firstLine(error)})`,
      {
        cause: error,
      },
    );
  }
  const EmbeddingsClass = loaded[known.className] as (new (fields: Record<string, unknown>) => Embeddings) | undefined;
  if (typeof EmbeddingsClass !== "function") throw new ConfigError(`${where}: ${known.package} has no ${known.className}`);
  try {
    return new EmbeddingsClass({ [known.modelKey]: model });
  } catch (error) {
    throw new ConfigError(`${where}: ${known.className} could not be made for '${model}': ${firstLine(error)}`, { cause: error });
  }
}

/** What a module exported as the embeddings: LangChain `Embeddings`, or a function of texts to vectors. */
export function moduleEmbeddings(value: unknown, where: string): Embeddings {
  if (value instanceof Embeddings) return value;
  if (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Embeddings).embedDocuments === "function" &&
    typeof (value as Embeddings).embedQuery === "function"
  ) {
    return value as Embeddings;
  }
  if (typeof value === "function") return new FunctionEmbeddings(value as (texts: string[]) => Promise<number[][]>);
  throw new ConfigError(`${where}: must be LangChain embeddings (embedDocuments, embedQuery) or a function of texts to vectors`);
}
