import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AIMessage } from "@langchain/core/messages";
import { CitationIndexError } from "../../src/errors/developer-errors.js";
import { citationSlice } from "../../src/events/citations.js";
import { collectCitations } from "../../src/runs/messages/citations-out.js";
import { messageText } from "../../src/runs/messages/message-text.js";

describe("citationSlice", () => {
  test("returns code points start_index..end_index inclusive", () => {
    assert.equal(citationSlice({ url: "https://e.org", start_index: 4, end_index: 8 }, "The quick fox"), "quick");
    assert.equal(citationSlice({ url: "https://e.org", startIndex: 0, endIndex: 2 }, "The quick fox"), "The");
  });
  test("counts code points, so accents and emoji are one character each", () => {
    const text = "Zoë 🦊 läuft über die Brücke";
    assert.equal(citationSlice({ url: "https://e.org", start_index: 4, end_index: 4 }, text), "🦊");
    assert.equal(citationSlice({ url: "https://e.org", start_index: 6, end_index: 10 }, text), "läuft");
  });
  test("rejects indices that do not fit and cited_text that does not match", () => {
    const text = "short";
    for (const [start, end] of [
      [-1, 2],
      [3, 2],
      [0, 5],
      [1.5, 2],
    ] as const) {
      assert.throws(() => citationSlice({ url: "u", start_index: start, end_index: end }, text), CitationIndexError);
    }
    assert.throws(() => citationSlice({ url: "u", start_index: 0 } as never, text), /integer start_index and end_index/);
    assert.throws(
      () => citationSlice({ url: "u", start_index: 0, end_index: 1, cited_text: "sh!" }, text),
      /says it cites "sh!" but its indices select "sh"/,
    );
  });
});

describe("collectCitations", () => {
  test("offsets indices of each text block into the whole response text, across non-ASCII blocks", () => {
    const blocks = [
      {
        type: "text",
        text: "Café ☕ culture: ",
        annotations: [{ type: "citation", url: "https://a.example", title: "A", startIndex: 0, endIndex: 3 }],
      },
      { type: "text", text: "Kaffee 🦊 ist gut. " },
      {
        type: "text",
        text: "Tea is older.",
        annotations: [
          { url: "https://b.example", title: "B", start_index: 0, end_index: 2, cited_text: "Tea" },
          { type: "file_citation", file_id: "f1" },
        ],
      },
    ];
    const message = new AIMessage({ content: blocks as never });
    const text = messageText(message);
    const citations = collectCitations(message);
    assert.equal(citations.length, 2);
    const codePoints = Array.from(text);
    const cited = citations.map((citation) =>
      codePoints.slice(citation.url_citation.start_index, citation.url_citation.end_index + 1).join(""),
    );
    assert.deepEqual(cited, ["Café", "Tea"]);
    assert.deepEqual(citations[1], {
      type: "url_citation",
      url_citation: { url: "https://b.example", title: "B", start_index: 34, end_index: 36 },
    });
  });
  test("a message without annotations has none; a title defaults to the URL", () => {
    assert.deepEqual(collectCitations(new AIMessage("plain")), []);
    const [citation] = collectCitations(
      new AIMessage({
        content: [{ type: "text", text: "see", annotations: [{ url: "https://u", start_index: 0, end_index: 2 }] }] as never,
      }),
    );
    assert.equal(citation?.url_citation.title, "https://u");
  });
});
