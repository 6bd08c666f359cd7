import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseCountTokensRequest, parseMessagesRequest } from "../../src/dialects/anthropic/parse-messages-request.js";
import { InvalidRequestError } from "../../src/errors/catalogue.js";

// Claude Code sends a `{"role": "system", "content": [text blocks]}` turn inside `messages` on
// every request (Anthropic's mid-conversation system messages). It once got a 400 ("role must
// be 'user' or 'assistant'") after six retries. Such turns are read: before the first user turn
// they join the system prompt; later ones stay system messages where they stand.

const text = (value: string, extra: Record<string, unknown> = {}) => ({ type: "text", text: value, ...extra });

describe("system turns inside messages", () => {
  test("a leading one joins the system prompt; a later one stays where it stands; block fields are ignored", () => {
    const request = parseMessagesRequest({
      model: "echo",
      max_tokens: 100,
      system: [text("You are Claude Code.", { cache_control: { type: "ephemeral" } })],
      messages: [
        { role: "system", content: [text("Today is Saturday.", { cache_control: { type: "ephemeral", ttl: "1h" } })] },
        { role: "user", content: "first" },
        { role: "assistant", content: "ok" },
        { role: "user", content: [text("second")] },
        { role: "system", content: "The user switched to plan mode." },
      ],
    });
    assert.deepEqual(
      request.messages.map((message) => [message.role, message.content]),
      [
        ["system", "You are Claude Code.\n\nToday is Saturday."],
        ["user", "first"],
        ["assistant", "ok"],
        ["user", "second"],
        ["system", "The user switched to plan mode."],
      ],
    );
  });

  test("count_tokens reads them the same way", () => {
    const request = parseCountTokensRequest({
      model: "echo",
      messages: [
        { role: "user", content: "hi" },
        { role: "system", content: [text("A reminder.")] },
      ],
    });
    assert.deepEqual(
      request.messages.map((message) => message.role),
      ["user", "system"],
    );
  });

  test("the conversation's own rules still hold around them, in Anthropic's words", () => {
    const refused = (messages: unknown[]) => {
      try {
        parseMessagesRequest({ model: "echo", max_tokens: 10, messages });
      } catch (error) {
        assert.ok(error instanceof InvalidRequestError);
        return `${error.param}: ${error.message}`;
      }
      assert.fail("accepted");
    };
    assert.match(
      refused([
        { role: "system", content: "x" },
        { role: "assistant", content: "hi" },
      ]),
      /^messages\.1\.role: .*first message must use the user role/u,
    );
    assert.match(refused([{ role: "system", content: "only a system turn" }]), /first message must use the user role/u);
    assert.match(
      refused([
        { role: "user", content: "x" },
        { role: "assistant", content: "y" },
        { role: "system", content: "z" },
      ]),
      /last message must use the user role/u,
    );
    assert.match(refused([{ role: "system", content: [{ type: "image", source: {} }] }]), /^messages\.0\.content/u);
    assert.match(refused([{ role: "tool", content: "x" }]), /role must be 'user', 'assistant' or 'system' \(got "tool"\)/u);
  });
});
