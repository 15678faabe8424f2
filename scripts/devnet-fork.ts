/** `npm run devnet:fork`: anvil forking the real chain as chain 4663, for those who can reach it. */
import { startAnvil } from "../devnet/anvil.js";

const upstream = process.env.UPSTREAM_RPC_URL;
if (!upstream) {
  console.error("devnet:fork: set UPSTREAM_RPC_URL to an RPC of the real chain 4663");
  process.exit(2);
}
const port = Number(process.env.ANVIL_PORT ?? 8545);
const anvil = await startAnvil({ port, forkUrl: upstream, inheritStdio: true });
console.log(`fork of ${new URL(upstream).host} on ${anvil.rpcUrl} (chain 4663); Ctrl-C stops it`);
const stop = () => void anvil.stop().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
