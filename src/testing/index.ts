/**
 * Helpers for graphs that need no provider: demos, templates and tests.
 * @packageDocumentation
 */
export { ScriptedChatModel, type ScriptedChatModelOptions, type ScriptedReply } from "./scripted-chat-model.js";
