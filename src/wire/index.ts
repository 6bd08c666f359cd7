export * from "./request.js";
export * from "./response.js";
