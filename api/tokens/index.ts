export { createTokens, SCREEN_DEFAULTS, type ScreenTuning, type Tokens, type TokenRecord } from "./registry.js";
