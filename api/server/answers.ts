import { z } from "zod";
import { named } from "../http/answers.js";

/**
 * The answers of SPEC "Server" as zod schemas, in SPEC's words: the OpenAPI document's (api/openapi).
 */

/** GET health: HTTP 200 unless down (503, the same shape). */
export const healthAnswer = named(
  "Health",
  z
    .object({
      status: z.enum(["ok", "degraded", "down"]),
      service: z.string(),
      version: z.string(),
      checks: z.record(z.unknown()).optional().describe("each part's reading: chain, indexer, database, treasury"),
    })
    .describe("Health of the chain, indexer and database."),
);
