export { createTrading, type Trading } from "./trading.js";
export type { CurveRoute, PoolRoute } from "./routing.js";
export { candidateRoutes } from "./routing.js";
export {
  buildApprove,
  buildPermit2Approve,
  buildRouterSwap,
  buildLockdown,
  describeRouterCall,
  permitTypedData,
  type PlanTx,
} from "./txs.js";
export { parseTradeRequest, tradeBody, tradeRequest, type TradeParameters, type TradeRequest } from "./request.js";
export { feeClassOf, recordRisks, type Sides, type TokenInfo, type Who } from "./sides.js";
export type { Evaluation } from "./evaluate.js";
export { round2, msSince } from "./timing.js";
export {
  createLedger,
  DROP_AFTER_S,
  relayedPlanOf,
  type Ledger,
  type TokenRef,
  type TradeRecord,
} from "./ledger.js";
export { createVolume, VOLUME_WINDOW_DAYS, type Volume, type VolumeTier } from "./volume.js";
export { createRelay, nodeKnows, resend, sendRaw, type Relay } from "./relay.js";
/** Request schemas, for the OpenAPI document (api/openapi). */
export { submitRequest, type SubmitParameters } from "./relay.js";
export { revokeRequest, type RevokeParameters } from "./revoke.js";
export { createWatcher, type Watcher } from "./watcher.js";
export { APPROVAL_MODES, LIMITS, SHIELD_POLICIES, riskVerdict, slippageCapBps, type Risk } from "./policy.js";
/** Answer schemas other domains' answers hold (the OpenAPI document's components). */
export {
  feeFields,
  markView,
  planSimulation,
  planTx,
  riskRow,
  routeRow,
  slippageBand,
  tokenRef,
  tradeReport,
  tradeRecord,
} from "./answers.js";
