import type { ContentfulStatusCode } from "hono/utils/http-status";

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
