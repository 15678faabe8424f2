import type { Redis } from "ioredis";
import { whenReady } from "../ports/redis.js";

/** A revoked key, or every key of a wallet (revoke-all). */
export type Revoked = { keyId: number } | { wallet: string };

/** Tells the other instances that keys were revoked, so their key caches drop them at once. */
export interface Revocations {
  publish(r: Revoked): Promise<void>;
  close(): Promise<void>;
}

const CHANNEL = "pit:revoked";

/**
 * Revocations fanned out over Redis pub/sub: every instance subscribes and forgets the revoked
 * keys from its cache as the message arrives, so a key revoked on one instance is refused by
 * the others on their next request. Without Redis another instance may serve a revoked key
 * from its cache for up to KEY_CACHE_TTL_MS (2 s).
 */
export function redisRevocations(connect: () => Redis, forget: (r: Revoked) => void): Revocations {
  const pub = connect();
  const sub = connect();
  sub.on("message", (_channel: string, message: string) => {
    try {
      forget(JSON.parse(message) as Revoked);
    } catch {
      // not ours
    }
  });
  // No offline queue: subscribe once connected; ioredis re-subscribes by itself after a reconnect.
  sub.once("ready", () => void sub.subscribe(CHANNEL).catch(() => {}));
  return {
    async publish(r) {
      await whenReady(pub);
      await pub.publish(CHANNEL, JSON.stringify(r));
    },
    async close() {
      pub.disconnect();
      sub.disconnect();
    },
  };
}
