import { z, type ZodTypeAny } from "zod";
import { CATALOGUE, refusesTrade, statusOf, type Code, type ContextOf, type Status } from "./catalogue.js";

export type RefusalOptions<C extends Code = Code> = {
  cause?: unknown;
  /** Seconds a client should wait before retrying (Retry-After). */
  retryAfterS?: number;
  /** For codes SPEC.md gives several statuses: which one (a key of that code's `when` in the catalogue). */
  context?: ContextOf<C>;
};

/**
 * A refusal in SPEC.md's words: a stable code, a message that may change, extra fields of the
 * error object. Status-free: the HTTP edge maps the code through the catalogue.
 */
export class Refusal<C extends Code = Code> extends Error {
  readonly extra: Record<string, unknown>;
  readonly retryAfterS: number | undefined;
  readonly context: string | undefined;

  constructor(
    readonly code: C,
    message: string,
    extra: Record<string, unknown> = {},
    options: RefusalOptions<C> = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "Refusal";
    this.extra = extra;
    this.retryAfterS = options.retryAfterS;
    this.context = options.context as string | undefined;
  }

  get status(): Status {
    return statusOf(this.code, this.context);
  }

  /** A refusal of the trade itself, kept as a refused trade (the catalogue says which codes are). */
  get refusesTrade(): boolean {
    return refusesTrade(this.code, this.context);
  }

  /** The same refusal with more extra fields (and this one as its cause). */
  with(extra: Record<string, unknown>): Refusal<C> {
    return new Refusal(
      this.code,
      this.message,
      { ...this.extra, ...extra },
      { cause: this, retryAfterS: this.retryAfterS, context: this.context as ContextOf<C> | undefined },
    );
  }

  body() {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }
}

export const isCode = (code: string): code is Code => Object.hasOwn(CATALOGUE, code);

/**
 * Parses a request body with a zod schema; the first problem is a 400 BAD_REQUEST naming the field.
 * A camelCase field whose snake_case name the schema reads is that problem, wherever it sits.
 */
export function parseBody<S extends z.ZodTypeAny>(
  schema: S,
  body: unknown,
  o: { unknownField?: "UNKNOWN_FIELD" } = {},
): z.infer<S> {
  const unknownCode = o.unknownField ?? "BAD_REQUEST";
  const camel = camelAlias(schema, body);
  if (camel) throw new Refusal(unknownCode, `${camel}: fields are snake_case; send ${snakeOf(camel)}`);
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const nested = nestedCamelAlias(parsed.error.issues);
  if (nested) throw new Refusal(unknownCode, nested);
  const i = parsed.error.issues[0]!;
  if (i.code === "custom" && i.params?.[WORDED]) throw new Refusal("BAD_REQUEST", i.message);
  if (i.code === "unrecognized_keys")
    throw new Refusal(unknownCode, `unknown field ${[...i.path, i.keys.join(", ")].join(".")}`);
  throw new Refusal("BAD_REQUEST", `${i.path.join(".") || "body"}: ${i.message}`);
}

/** Inside an object: an unknown camelCase field sent where its snake_case name is missing (`limits.maxTradeUsd`). */
function nestedCamelAlias(issues: z.ZodIssue[]): string | null {
  const missing = new Set(issues.filter((i) => i.code === "invalid_type").map((i) => i.path.join(".")));
  for (const i of issues) {
    if (i.code !== "unrecognized_keys") continue;
    const k = i.keys.find((key) => missing.has([...i.path, snakeOf(key)].join(".")) && snakeOf(key) !== key);
    if (k) return `${[...i.path, k].join(".")}: fields are snake_case; send ${snakeOf(k)}`;
  }
  return null;
}

/** `tokenIn` as this API spells its fields: `token_in`. */
export const snakeOf = (field: string) => field.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();

const KEYS = new WeakMap<ZodTypeAny, ReadonlySet<string>>();

/** The top-level fields a schema reads (through effects, defaults, unions), cached per schema. */
function keysOf(schema: ZodTypeAny): ReadonlySet<string> {
  let keys = KEYS.get(schema);
  if (!keys) {
    const d = schema._def as Record<string, unknown>;
    const inner = (d.schema ?? d.innerType ?? d.in) as ZodTypeAny | undefined;
    const options = (d.options ?? [d.left, d.right].filter(Boolean)) as ZodTypeAny[] | Map<unknown, ZodTypeAny>;
    keys = new Set(
      schema instanceof z.ZodObject
        ? Object.keys(schema.shape as object)
        : inner
          ? keysOf(inner)
          : [...options.values()].flatMap((x) => [...keysOf(x)]),
    );
    KEYS.set(schema, keys);
  }
  return keys;
}

/**
 * A camelCase field of the body whose snake_case name the schema reads (`tokenIn` for `token_in`):
 * named, not ignored, so a lenient schema does not quietly trade on a default the caller meant to set.
 */
function camelAlias(schema: ZodTypeAny, body: unknown): string | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  let keys: ReadonlySet<string> | null = null;
  for (const field of Object.keys(body)) {
    if (!/[a-z0-9][A-Z]/.test(field)) continue;
    keys ??= keysOf(schema);
    if (!keys.has(field) && keys.has(snakeOf(field))) return field;
  }
  return null;
}

const WORDED = "worded";

/**
 * `schema` as the document shows it, refused in its own words: a value `problem` names a problem
 * of is 400 BAD_REQUEST with that message as it is (parseBody adds no field name), before `schema`
 * reads it. For inputs whose refusals SPEC words per field ("limit must be an integer from 1 to 100").
 */
export function inOwnWords<S extends ZodTypeAny>(schema: S, problem: (value: unknown) => string | null) {
  return z.preprocess((value, ctx) => {
    const message = problem(value);
    if (message !== null) ctx.addIssue({ code: "custom", message, params: { [WORDED]: true }, fatal: true });
    return value;
  }, schema);
}

/** `schema`, any value it refuses answered with `message` as it is (inOwnWords). */
export const worded = <S extends ZodTypeAny>(schema: S, message: string) =>
  inOwnWords(schema, (value) => (schema.safeParse(value).success ? null : message));

/** A chain read: anything but our own refusal becomes 502 RPC_UNAVAILABLE (retryable). */
export async function rpc<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof Refusal) throw err;
    throw new Refusal(
      "RPC_UNAVAILABLE",
      `the chain RPC did not answer: ${(err as Error).message.split("\n")[0]!.slice(0, 160)}`,
      {},
      { cause: err, retryAfterS: 2 },
    );
  }
}
