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
