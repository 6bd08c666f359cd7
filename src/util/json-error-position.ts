/**
 * Where a text stops being JSON: the index of the first character a JSON parser cannot
 * accept, or the text's length when it ends too early. For error messages only (V8's own
 * messages give a position for some mistakes and not for others); run it after `JSON.parse`
 * has failed, never instead of it.
 */
export function jsonErrorPosition(text: string): number {
  let at = 0;
  const fail = (): never => {
    throw at;
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at]!)) at += 1;
  };
  const literal = (word: string) => {
    for (const char of word) {
      if (text[at] !== char) fail();
      at += 1;
    }
  };
  const string = () => {
    at += 1;
    while (at < text.length && text[at] !== '"') {
      if (text.charCodeAt(at) < 0x20) fail();
      if (text[at] === "\\") {
        at += 1;
        if (text[at] === "u") {
          for (let digit = 0; digit < 4; digit += 1) {
            at += 1;
            if (!/[0-9a-fA-F]/u.test(text[at] ?? "")) fail();
          }
        } else if (!'"\\/bfnrt'.includes(text[at] ?? "x")) fail();
      }
      at += 1;
    }
    if (at >= text.length) fail();
    at += 1;
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/u.exec(text.slice(at, at + 400));
    if (match === null || match[0] === "" || match[0] === "-") fail();
    at += match![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 10_000) fail();
    space();
    const char = text[at];
    if (char === "{") {
      at += 1;
      space();
      if (text[at] === "}") {
        at += 1;
        return;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        string();
        space();
        if (text[at] !== ":") fail();
        at += 1;
        value(depth + 1);
        space();
        if (text[at] === ",") at += 1;
        else if (text[at] === "}") {
          at += 1;
          return;
        } else fail();
      }
    }
    if (char === "[") {
      at += 1;
      space();
      if (text[at] === "]") {
        at += 1;
        return;
      }
      for (;;) {
        value(depth + 1);
        space();
        if (text[at] === ",") at += 1;
        else if (text[at] === "]") {
          at += 1;
          return;
        } else fail();
      }
    }
    if (char === '"') string();
    else if (char === "t") literal("true");
    else if (char === "f") literal("false");
    else if (char === "n") literal("null");
    else number();
  };
  try {
    value(0);
    space();
    return at < text.length ? at : text.length;
  } catch (position) {
    return Math.min(position as number, text.length);
  }
}
