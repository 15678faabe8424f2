export { createStats, type Stats } from "./stats.js";
export { publicConfig } from "./config.js";
export { viewsLagBlocks } from "./health.js";
