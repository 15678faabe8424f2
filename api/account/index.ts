export {
  createPortfolio,
  PORTFOLIO_MAX_TRADED,
  PORTFOLIO_TTL_MS,
  type Holding,
  type Portfolio,
  type PortfolioService,
} from "./portfolio.js";
