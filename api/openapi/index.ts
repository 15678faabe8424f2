export { openApiDocument } from "./document.js";
export { ROUTES, type RouteDoc } from "./table.js";
