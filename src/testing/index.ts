/**
 * Helpers for graphs that need no provider: demos, templates and tests.
 * @packageDocumentation
 */
export {
  type ScriptedCallOptions,
  ScriptedChatModel,
  type ScriptedChatModelOptions,
  type ScriptedReply,
  type ScriptedUsage,
} from "./scripted-chat-model.js";
