import pino, { type Logger } from "pino";

/**
 * Structured JSON logs on stdout. Writes are buffered (4 KB, flushed on exit): one write
 * syscall per request line would halve the API's throughput. Code never logs keys, signatures
 * or secrets; redaction of the usual places is only a backstop.
 */
export function createLogger(level = process.env.LOG_LEVEL ?? "info", dest: number | string = 1): Logger {
  const stream = pino.destination({ dest, minLength: 4096, sync: false });
  process.once("exit", () => {
    try {
      stream.flushSync();
    } catch {
      // nothing left to flush, or the stream is closed
    }
  });
  return pino(
    {
      level,
      base: { service: "pit" },
      // Exact paths only: wildcard redaction doubles the cost of every line.
      redact: {
        paths: ["headers.authorization", "body.signature", "body.api_key", "err.config.headers.authorization"],
        censor: "[redacted]",
      },
    },
    stream,
  );
}
