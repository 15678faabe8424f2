import type { Logger } from "pino";
import type { PublicClient } from "viem";
import type { Config } from "../../lib/config.js";

/**
 * What every part of the API is built with, declared once (Ponder's `Common` is the model): the
 * config, the chain client (the service's own, trusted reads), the clock (milliseconds; tests
 * move it) and the log. A domain's deps type is `Common & { ...its own }`, or a Pick of it.
 */
export type Common = {
  config: Config;
  chain: PublicClient;
  clock: () => number;
  logger?: Logger;
};
