export { CATALOGUE, statusOf, type Code, type Status } from "./catalogue.js";
export { isCode, parseBody, Refusal, rpc, type RefusalOptions } from "./refusal.js";
