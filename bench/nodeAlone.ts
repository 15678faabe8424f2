/**
 * Issue 31 point 1: the node's own limit beside the service. A route's chain calls, as the counting
 * proxy saw them (each round trip's calls together, a batch as one), are sent straight to the same
 * anvil, one pass at a time or from as many agents as the route had, in the same run; the route is
 * then reported as a ratio to that, and its own time beyond it.
 */
import type { Row } from "./stats.js";

export type RpcCall = { method: string; params?: unknown };
/** One round trip's calls, as the route sent them. */
export type Trip = RpcCall[];

/** Records the trips `proxy` forwards while `during` runs (hand `record.onTrip` to startRpcProxy). */
export function tripRecorder() {
  let on = false;
  let trips: Trip[] = [];
  return {
    onTrip: (calls: Trip) => void (on && trips.push(calls)),
    async during(f: () => Promise<unknown>): Promise<Trip[]> {
      trips = [];
      on = true;
      try {
        await f();
      } finally {
        on = false;
      }
      return trips;
    },
  };
}

/** Sends one round trip straight to the node; a node error throws (the replay must be what the route did). */
export async function sendTrip(url: string, trip: Trip): Promise<void> {
  const body = trip.map((c, i) => ({ jsonrpc: "2.0", id: i + 1, method: c.method, params: c.params ?? [] }));
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body.length === 1 ? body[0] : body),
  });
  const answers = [(await res.json()) as unknown].flat() as { error?: { message: string } }[];
  const failed = answers.find((a) => a.error);
  if (failed) throw new Error(`node alone ${trip.map((c) => c.method).join("+")}: ${failed.error!.message}`);
}

/** `n` passes over `trips`, in order, one at a time: each pass's ms. */
export async function replay(url: string, trips: Trip[], n: number): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    for (const trip of trips) await sendTrip(url, trip);
    ms.push(performance.now() - t0);
  }
  return ms;
}

/** `agents` loops of passes over `trips` for `seconds`: passes per second. */
export async function replayConcurrent(url: string, trips: Trip[], agents: number, seconds: number): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let passes = 0;
  await Promise.all(
    Array.from({ length: agents }, async () => {
      while (performance.now() < until) {
        for (const trip of trips) await sendTrip(url, trip);
        passes++;
      }
    }),
  );
  return passes / seconds;
}

const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

/** A one-number row (a ratio or a difference) in the benchmark's table shape. */
export function valueRow(name: string, unit: string, value: number, n: number): Row {
  return { name, unit, n, p50: value, p99: value, min: value, max: value, mean: value };
}

/** The route against the node alone: p50 over p50, and the route's own p50 time beyond it (goal < 3 ms). */
export function ratioRows(route: string, service: number[], node: number[]): Row[] {
  return [
    valueRow(`${route} as a ratio to the node alone, p50 over p50`, "x", p50(service) / p50(node), service.length),
    valueRow(
      `${route}: the service's own p50 time beyond the node alone`,
      "ms",
      p50(service) - p50(node),
      service.length,
    ),
  ];
}
