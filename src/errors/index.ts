export * from "./catalogue.js";
export * from "./developer-errors.js";
export * from "./serve-error.js";
