import { mnemonicToAccount } from "viem/accounts";
import { createPitClient, readPins } from "@pit/sdk";

const [baseUrl = "http://localhost:42069", rpcUrl = "http://127.0.0.1:8545"] = process.argv.slice(2);
const account = mnemonicToAccount("test test test test test test test test test test test junk", { addressIndex: 5 });
const pins = await readPins(baseUrl); // pin once when setting the agent up, then keep them
const pit = await createPitClient({ baseUrl, rpcUrl, account, pins });
await pit.signIn();
const t = await pit.trade({ tokenIn: "ETH", tokenOut: "USDG", notionalUsd: 25 });
console.log(`mined ${t.txHash}: ${Number(t.amountOut) / 1e6} USDG`);
