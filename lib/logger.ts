import pino, { type Logger } from "pino";

/** Structured JSON logs. Redaction is a backstop: code never logs keys, signatures or secrets. */
export function createLogger(level = process.env.LOG_LEVEL ?? "info"): Logger {
  return pino({
    level,
    base: { service: "pit" },
    redact: { paths: ["*.authorization", "*.signature", "*.api_key", "*.privateKey", "*.secret"], censor: "[redacted]" },
  });
}
