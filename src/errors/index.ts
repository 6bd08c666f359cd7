export * from "./serve-error.js";
export * from "./catalogue.js";
