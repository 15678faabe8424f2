export { openApiDocument } from "./document.js";
