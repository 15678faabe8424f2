/**
 * JSON deflated in parts (issue 29 point 6): a value's JSON text as UTF-8, cut into PART_BYTES pieces that libuv's
 * thread pool deflates (raw, level 1) side by side. Every part but the last ends with a sync flush (an empty stored
 * block, no final bit), so the parts joined are one raw deflate stream, inflated at once (as pigz does, without its
 * shared dictionary: a few percent of the ratio). Deflate reads bytes, so a cut may fall inside a character.
 */
import { promisify } from "node:util";
import { constants, deflateRaw, inflateRaw } from "node:zlib";
import { allSettledOrThrow } from "./settled.js";

const deflating = promisify(deflateRaw);
const inflating = promisify(inflateRaw);

/** Bytes a part: a few milliseconds of deflate each, about sixteen parts for a 4 MB answer. */
export const PART_BYTES = 256 * 1024;

/**
 * The buffer the last text was written into, kept for the next (one call at a time; another meanwhile takes a new
 * one). A new 4 MB buffer on every pass cost 13-36 ms here, nearly all of it the first touch of fresh pages; writing
 * into pages already touched, under 1 ms. Three bytes a character is room for any text (a UTF-16 unit is at most three
 * bytes of UTF-8), so its length need not be counted first (another walk of the whole text).
 */
let scratch: Buffer | null = null;

/**
 * `value` as JSON (as `json` writes it, JSON.stringify by default), deflated in parts of `partBytes`; throws where
 * `json` throws or gives no text.
 */
export async function packJson(
  value: unknown,
  partBytes = PART_BYTES,
  json: (value: unknown) => string | undefined = JSON.stringify,
): Promise<Buffer> {
  const text = json(value);
  if (text === undefined) throw new TypeError(`a ${typeof value} has no JSON text`);
  const room = 3 * text.length;
  const mine = scratch && scratch.length >= room ? scratch : Buffer.allocUnsafeSlow(room);
  scratch = null;
  try {
    const bytes = mine.subarray(0, mine.write(text));
    const parts: Promise<Buffer>[] = [];
    for (let at = 0; at < bytes.length || at === 0; at += partBytes) {
      const last = at + partBytes >= bytes.length;
      const finishFlush = last ? constants.Z_FINISH : constants.Z_SYNC_FLUSH;
      parts.push(deflating(bytes.subarray(at, at + partBytes), { level: 1, finishFlush }));
    }
    // Settled, not only resolved: no deflate may still read the buffer when it is handed on.
    return Buffer.concat(await allSettledOrThrow(parts));
  } finally {
    keep(mine);
  }
}

/** Keeps the larger of the buffer kept and `b` for the next call. */
function keep(b: Buffer) {
  if (!scratch || scratch.length < b.length) scratch = b;
}

/** A packed value (packJson) back. */
export const unpackJson = async <T>(packed: Buffer): Promise<T> =>
  JSON.parse((await inflating(packed)).toString()) as T;
