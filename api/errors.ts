import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";

/**
 * A refusal with SPEC.md's stable code and status. Routes and domain modules throw it; the error
 * middleware answers `{error: {code, message, ...extra}}`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = "ApiError";
  }

  body() {
    return { error: { code: this.code, message: this.message, ...this.extra } };
  }
}

/** Parses a request body with a zod schema; the first problem is a 400 BAD_REQUEST naming the field. */
export function parseBody<S extends z.ZodTypeAny>(schema: S, body: unknown): z.infer<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const i = parsed.error.issues[0]!;
  throw new ApiError(400, "BAD_REQUEST", i.code === "unrecognized_keys" ? `unknown field ${i.keys.join(", ")}` : `${i.path.join(".") || "body"}: ${i.message}`);
}

/** A chain read: anything but our own refusal becomes 502 RPC_UNAVAILABLE (retryable). */
export async function rpc<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(502, "RPC_UNAVAILABLE", `the chain RPC did not answer: ${(err as Error).message.split("\n")[0]!.slice(0, 160)}`, {}, 2);
  }
}
