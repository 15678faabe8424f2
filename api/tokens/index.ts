export { createTokens, type Tokens, type TokenRecord } from "./registry.js";
