import assert from "node:assert/strict";
import { test } from "node:test";
import { agentInboxRequest, type HumanInterrupt, humanResponsesFor, inboxQuestion } from "../../src/runs/interrupts/agent-inbox.js";

// How a person's answer to an Agent Inbox request becomes the HumanResponse[] its graph reads.

const request = (config: Partial<HumanInterrupt["config"]>): HumanInterrupt => ({
  action_request: { action: "search", args: { query: "weather", limit: 3 } },
  config: { allow_accept: false, allow_edit: false, allow_respond: false, allow_ignore: false, ...config },
  description: "Search the web?",
});

test("a payload is an Agent Inbox request alone or as the only item of a list; anything else is not", () => {
  const asked = request({ allow_accept: true });
  assert.equal(agentInboxRequest([asked]), asked);
  assert.equal(agentInboxRequest(asked), asked);
  assert.equal(agentInboxRequest({ question: "Proceed?" }), undefined);
  assert.equal(agentInboxRequest([asked, asked]), undefined);
});

test("words, forms and responses map to what the request allows; the rest is refused naming what it takes", () => {
  const all = request({ allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true });
  assert.deepEqual(humanResponsesFor(all, "Yes."), [{ type: "accept", args: null }]);
  assert.deepEqual(humanResponsesFor(all, "skip"), [{ type: "ignore", args: null }]);
  assert.deepEqual(humanResponsesFor(all, "look for rain instead"), [{ type: "response", args: "look for rain instead" }]);
  assert.deepEqual(humanResponsesFor(all, '{"limit": "5"}'), [
    { type: "edit", args: { action: "search", args: { query: "weather", limit: 5 } } },
  ]);
  assert.deepEqual(humanResponsesFor(all, { response_type: "edit", args_query: "rain", args_limit: "" }), [
    { type: "edit", args: { action: "search", args: { query: "rain", limit: 3 } } },
  ]);
  assert.deepEqual(humanResponsesFor(all, [{ type: "accept", args: null }]), [{ type: "accept", args: null }]);
  const acceptOnly = request({ allow_accept: true, allow_ignore: true });
  assert.throws(
    () => humanResponsesFor(acceptOnly, "do something else"),
    /'do something else' is not an answer this question takes: this question takes accept, ignore\./u,
  );
  assert.throws(() => humanResponsesFor(acceptOnly, [{ type: "edit", args: {} }]), /'edit' is not allowed here/u);
  assert.match(
    inboxQuestion(acceptOnly),
    /^Search the web\?\nsearch \{"query":"weather","limit":3\}\nAnswer with 'accept' to go ahead, 'ignore' to skip it\.$/u,
  );
});
