/**
 * The JSON text of an answer whose `rows` are shared by many answers: the standings worker's rows (2-3 MB of JSON for
 * 1,000 entrants) go to the store once and to every reader of GET league/standings until the next pass. The rows'
 * text is made once per rows array, kept by the array's identity; the rest of the answer (a few small fields, `now`
 * among them) each time. Byte for byte `JSON.stringify(answer)`, on the condition that a rows array is never changed
 * once an answer holds it (the worker's answers are built, then only read).
 */
const rowsTexts = new WeakMap<unknown[], string>();

/** Stands where the rows go: a string no answer's own fields hold (a control character, escaped in JSON). */
const HOLE = "\u0000rows\u0000";
const HOLE_JSON = JSON.stringify(HOLE);

/** JSON.stringify(answer), the text of its `rows` (an array) made once per array. */
export function answerJson(answer: unknown): string {
  const rows = typeof answer === "object" && answer !== null ? (answer as { rows?: unknown }).rows : undefined;
  if (!Array.isArray(rows)) return JSON.stringify(answer);
  let text = rowsTexts.get(rows);
  if (text === undefined) rowsTexts.set(rows, (text = JSON.stringify(rows)));
  // The spread keeps each key where it was: the hole is where the rows were.
  const parts = JSON.stringify({ ...(answer as object), rows: HOLE }).split(HOLE_JSON);
  return parts.length === 2 ? parts[0] + text + parts[1] : JSON.stringify(answer);
}
