import assert from "node:assert/strict";
import { test } from "node:test";
import { Embeddings } from "@langchain/core/embeddings";
import { isProviderString, moduleEmbeddings, providerEmbeddings } from "../../src/store/graph-store-index.js";

// What `store.index.embed` may be: a provider string, made by that provider's LangChain class;
// a module's LangChain embeddings or function of texts to vectors.

test("a provider string is told from a module reference", () => {
  assert.equal(isProviderString("openai:text-embedding-3-small"), true);
  assert.equal(isProviderString("cohere:embed-english-v3.0"), true);
  assert.equal(isProviderString("./src/embed.ts:embed"), false);
  assert.equal(isProviderString("embed.ts:embed"), false);
  assert.equal(isProviderString("/abs/embed.js"), false);
});

test("a provider string is made by its LangChain class, from the project's packages", async () => {
  const imported: string[] = [];
  const made = await providerEmbeddings("openai:text-embedding-3-small", "langgraph.json: store.index.embed", async (specifier) => {
    imported.push(specifier);
    return import(specifier);
  });
  assert.deepEqual(imported, ["@langchain/openai"]);
  assert.equal(made.constructor.name, "OpenAIEmbeddings");
  assert.equal((made as unknown as { model: string }).model, "text-embedding-3-small");
});

test("an unknown provider, or one whose package is missing, is one line naming the key", async () => {
  await assert.rejects(
    providerEmbeddings("acme:embed-1", "langgraph.json: store.index.embed", async () => ({})),
    /^ConfigError: langgraph\.json: store\.index\.embed: 'acme' is not a provider chat-serve knows/u,
  );
  await assert.rejects(
    providerEmbeddings("cohere:embed-english-v3.0", "langgraph.json: store.index.embed", async () => {
      throw new Error("Cannot find package '@langchain/cohere'");
    }),
    /store\.index\.embed: 'cohere:embed-english-v3\.0' needs @langchain\/cohere: run 'npm install @langchain\/cohere'/u,
  );
});

test("a module's function of texts to vectors becomes LangChain embeddings; anything else is refused", async () => {
  const embeddings = moduleEmbeddings(async (texts: string[]) => texts.map((text) => [text.length, 1]), "where");
  assert.ok(embeddings instanceof Embeddings);
  assert.deepEqual(await embeddings.embedQuery("four"), [4, 1]);
  assert.deepEqual(await embeddings.embedDocuments(["a", "bb"]), [
    [1, 1],
    [2, 1],
  ]);
  assert.throws(() => moduleEmbeddings(42, "langgraph.json: store.index.embed"), /store\.index\.embed: must be LangChain embeddings/u);
});
