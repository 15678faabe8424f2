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

/** Parses a request body with a zod schema; the first problem is a 400 BAD_REQUEST naming the field. */
export function parseBody<S extends z.ZodTypeAny>(
  schema: S,
  body: unknown,
  o: { unknownField?: "UNKNOWN_FIELD" } = {},
): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const i = parsed.error.issues[0]!;
  if (i.code === "custom" && i.params?.[WORDED]) throw new Refusal("BAD_REQUEST", i.message);
  if (i.code === "unrecognized_keys")
    throw new Refusal(o.unknownField ?? "BAD_REQUEST", `unknown field ${[...i.path, i.keys.join(", ")].join(".")}`);
  throw new Refusal("BAD_REQUEST", `${i.path.join(".") || "body"}: ${i.message}`);
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
