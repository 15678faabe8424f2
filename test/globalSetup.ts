import { ensureSnapshot } from "../devnet/snapshot.js";

/** Builds the pristine devnet snapshot once, before any worker starts its own anvil from it. */
export default async function setup() {
  await ensureSnapshot((m) => console.log(m));
}
