/**
 * The port the league declares for what it reads of a hosted agent (the root wires it to hosted's
 * store): its name, its paper book and brain state for the practice board. Here rather than in
 * practice.ts so that the boards (prize.ts) and the practice gate both take it without importing
 * each other.
 */
export type PracticeAgent = {
  id: string;
  name: string;
  paperBook: Record<string, string> | null;
  brainState: Record<string, unknown> | null;
};
