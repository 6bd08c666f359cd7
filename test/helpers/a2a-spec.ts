import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createFileRegistry, type DescMessage, fromBinary, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { Ajv } from "ajv";
import protobuf from "protobufjs";
import descriptor from "protobufjs/ext/descriptor/index.js";

// Checks what the A2A endpoints send against the protocol's own definitions (copies of
// shared/a2a-spec/ in test/fixtures): A2A 1.0 is its proto under the ProtoJSON mapping, read
// with protobufjs and decoded strictly by @bufbuild/protobuf (unknown fields, wrong types,
// enum names, two members of a oneof all fail), with the fields the proto marks REQUIRED
// checked too; A2A 0.3 is its JSON Schema.

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

const root = new protobuf.Root();
const common = (protobuf as unknown as { common: Record<string, { nested: protobuf.INamespace["nested"] }> }).common;
for (const name of ["google/protobuf/struct.proto", "google/protobuf/timestamp.proto", "google/protobuf/empty.proto"]) {
  root.addJSON(common[name]!.nested!);
}
protobuf.parse(readFileSync(fixture("a2a-v1.0.0.proto"), "utf8"), root, { keepCase: true });
root.resolveAll();

type Json = Record<string, any>;
const pascal = (name: string) => name.replace(/(^|_)([a-z])/gu, (_match, _sep, letter: string) => letter.toUpperCase());
const camel = (name: string) => name.replace(/_([a-z0-9])/gu, (_match, letter: string) => letter.toUpperCase());

/**
 * protobufjs's descriptors name types relative to their scope, leave json names out and
 * call map entries after their field; the registry wants what protoc makes.
 */
function qualify(messages: Json[] | undefined, scope: protobuf.Namespace, fullName: string): void {
  for (const message of messages ?? []) {
    const type = scope.get(message.name) as protobuf.Namespace;
    const name = `${fullName}.${message.name}`;
    const entries = new Map<string, Json>(
      (message.nestedType ?? []).filter((nested: Json) => nested.options?.mapEntry).map((nested: Json) => [nested.name, nested]),
    );
    for (const field of message.field ?? []) {
      field.jsonName = camel(field.name);
      if (field.typeName === undefined || field.typeName === "") continue;
      const entry = entries.get(field.typeName);
      if (entry !== undefined) {
        entry.name = `${pascal(field.name)}Entry`;
        field.typeName = `${name}.${entry.name}`;
        for (const part of entry.field) {
          part.jsonName = part.name;
          if (part.typeName) part.typeName = type.lookupTypeOrEnum(part.typeName).fullName;
        }
      } else {
        field.typeName = type.lookupTypeOrEnum(field.typeName).fullName;
      }
    }
    qualify(
      (message.nestedType ?? []).filter((nested: Json) => !nested.options?.mapEntry),
      type,
      name,
    );
  }
}

const set = (root as unknown as { toDescriptor(syntax: string): Json }).toDescriptor("proto3");
for (const file of set.file) qualify(file.messageType, root.lookup(file.package) as protobuf.Namespace, `.${file.package}`);
const a2aFile = set.file.find((file: Json) => file.package === "lf.a2a.v1");
a2aFile.dependency = set.file.filter((file: Json) => file !== a2aFile).map((file: Json) => file.name);
const registry = createFileRegistry(
  fromBinary(
    FileDescriptorSetSchema,
    (descriptor as unknown as { FileDescriptorSet: { encode(set: Json): { finish(): Uint8Array } } }).FileDescriptorSet.encode(
      set,
    ).finish(),
  ),
);

/** The fields the proto marks REQUIRED are there (a repeated one, not empty), all the way down. */
function checkRequired(type: protobuf.Type, value: Json, path: string): void {
  for (const field of type.fieldsArray) {
    const present = value[field.name] ?? value[camel(field.name)];
    const required = field.options?.["(google.api.field_behavior)"] === "REQUIRED";
    if (required) {
      const missing = present === undefined || present === "" || (Array.isArray(present) && present.length === 0);
      assert.ok(!missing, `${path}.${camel(field.name)} is REQUIRED in the A2A 1.0 proto`);
    }
    const child = field.resolvedType;
    if (present === undefined || !(child instanceof protobuf.Type) || child.fullName.startsWith(".google.")) continue;
    if (field.map) {
      for (const [key, item] of Object.entries(present as Json)) checkRequired(child, item, `${path}.${camel(field.name)}.${key}`);
    } else if (field.repeated) {
      for (const [index, item] of (present as Json[]).entries()) checkRequired(child, item, `${path}.${camel(field.name)}[${index}]`);
    } else {
      checkRequired(child, present, `${path}.${camel(field.name)}`);
    }
  }
}

/** Asserts a body is a valid A2A 1.0 message of the type named (e.g. `Task`, `StreamResponse`, `AgentCard`). */
export function assertA2a(typeName: string, value: unknown, label = typeName): void {
  const desc: DescMessage | undefined = registry.getMessage(`lf.a2a.v1.${typeName}`);
  assert.ok(desc, `no message ${typeName} in the A2A 1.0 proto`);
  try {
    fromJson(desc, value as JsonValue);
  } catch (error) {
    assert.fail(`${label} is not a valid A2A 1.0 ${typeName}: ${(error as Error).message}\n${JSON.stringify(value).slice(0, 800)}`);
  }
  checkRequired(root.lookupType(`lf.a2a.v1.${typeName}`), value as Json, label);
}

const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addSchema({ ...JSON.parse(readFileSync(fixture("a2a-v0.3.0.json"), "utf8")), $id: "a2a-v0.3" });

/** Asserts a body is valid under a definition of the A2A 0.3 JSON Schema (e.g. `SendMessageResponse`, `AgentCard`). */
export function assertA2aV03(definition: string, value: unknown, label = definition): void {
  const validate = ajv.getSchema(`a2a-v0.3#/definitions/${definition}`);
  assert.ok(validate, `no definition ${definition} in the A2A 0.3 schema`);
  assert.ok(
    validate(value),
    `${label} is not a valid A2A 0.3 ${definition}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 800)}`,
  );
}
