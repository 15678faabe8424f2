export { CATALOGUE, statusOf, type Code, type Status } from "./catalogue.js";
export { inOwnWords, isCode, parseBody, Refusal, rpc, worded, type RefusalOptions } from "./refusal.js";
