import { z, type ZodTypeAny, type ZodTypeDef } from "zod";
import { RISKS } from "../../lib/risks.js";

/**
 * Building blocks of the answers' zod schemas (api/<domain>/answers.ts): the OpenAPI document is generated from them
 * (api/openapi/document.ts), so a route's answer is described once, in SPEC's words.
 */

/** Component names of the schemas the document shows once and refers to (`#/components/schemas/<name>`). */
const NAMES = new Map<ZodTypeDef, string>();
const SCHEMAS = new Map<string, ZodTypeAny>();

/** `s` as a named component of the document: every answer that holds it refers to it by name. */
export function named<T extends ZodTypeAny>(name: string, s: T): T {
  if (SCHEMAS.has(name) && SCHEMAS.get(name) !== s) throw new Error(`two answer schemas are named ${name}`);
  NAMES.set(s._def, name);
  SCHEMAS.set(name, s);
  return s;
}

/** The component name of a schema (by its definition, as zod-to-json-schema meets it) given to `named`. */
export const nameOf = (def: ZodTypeDef): string | undefined => NAMES.get(def);
/** The schema given to `named` under `name`. */
export const namedSchema = (name: string): ZodTypeAny | undefined => SCHEMAS.get(name);

/** A token amount: a decimal string of the token's smallest unit (SPEC <atoms>). */
export const atoms = z
  .string()
  .regex(/^-?\d+$/)
  .describe("atoms: a decimal string of the token's smallest unit");
/** A 0x address (SPEC <wallet>: 0x + 40 hex digits). */
export const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/)
  .describe("a 0x address (0x + 40 hex digits)");
/** A 0x hex string (a transaction's data, a signature, a hash). */
export const hex = z
  .string()
  .regex(/^0x[0-9a-fA-F]*$/)
  .describe("0x hex");
/** A transaction hash (SPEC <hash>). */
export const txHash = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/)
  .describe("a 0x transaction hash");
/** Unix seconds (SPEC <unix_s>). */
export const unixS = z.number().int().describe("unix seconds");
/** A dollar amount (SPEC <usd>). */
export const usd = z.number().describe("US dollars");
/** Basis points. */
export const bps = z.number().describe("basis points (1/100 of a percent)");

/** One disclosed risk (SPEC "Risk disclosure table"): trades and token records carry them. */
export const riskRow = named(
  "Risk",
  z
    .object({
      code: z.enum(Object.keys(RISKS) as [keyof typeof RISKS, ...(keyof typeof RISKS)[]]),
      severity: z.enum(["severe", "info"]).describe("severe codes must be listed in accept_risks to trade"),
      detail: z.string(),
      token: z.string().optional().describe("the token it is about"),
    })
    .describe("A risk disclosure: severe codes first."),
);
