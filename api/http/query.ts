import { Refusal } from "../errors/index.js";
import type { RawCall } from "./route.js";

/**
 * A route's `first` step for a GET that takes only the `allowed` query parameters: any other is
 * 400 BAD_REQUEST "unknown query parameter x; this route takes <takes>" before any value is read.
 */
export const onlyQuery =
  (allowed: readonly string[], takes = allowed.join(", ")) =>
  ({ c }: RawCall): void => {
    const extra = Object.keys(c.req.query()).filter((k) => !allowed.includes(k));
    if (extra.length)
      throw new Refusal("BAD_REQUEST", `unknown query parameter ${extra[0]}; this route takes ${takes}`);
  };

/** `onlyQuery` for a route that takes no query parameter. */
export const noQuery = onlyQuery([], "none");
