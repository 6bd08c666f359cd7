export * from "./catalogue.js";
export * from "./serve-error.js";
