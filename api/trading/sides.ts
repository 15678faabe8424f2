import { getAddress, zeroAddress, type Address } from "viem";
import { majorSymbols } from "../../lib/fees.js";
import type { KeyRecord } from "../auth/index.js";
import { Refusal } from "../errors/index.js";
import type { Market } from "../market/index.js";
import type { TokenRecord, Tokens } from "../tokens/index.js";
import type { TokenRef } from "./ledger.js";
import { LIMITS, type Risk } from "./policy.js";
import type { FeeClass } from "../../lib/fees.js";
import { lc } from "../../lib/address.js";
import type { Common } from "../ports/common.js";

/** Who asks: the key (for its wallet and screening budget) and the client address. */
export type Who = { key: KeyRecord; clientAddr: string };

/** A side of the trade as the service sees it. */
export type TokenInfo = {
  param: string;
  /** As named (ETH = 0x0, WETH its contract). */
  address: Address;
  /** As pools hold it (WETH trades as native ETH). */
  currency: Address;
  symbol: string;
  name: string;
  decimals: number;
  core: boolean;
  major: boolean;
  stock: boolean;
  feed: boolean;
  record: TokenRecord | null;
  tierLimitUsd: number;
};

/** The risks the registry's records of both sides carry, each named by its token (a core symbol or the address). */
export function recordRisks(tin: TokenInfo, tout: TokenInfo): Risk[] {
  const risks: Risk[] = [];
  for (const t of [tin, tout])
    for (const x of (t.record?.risks as Risk[] | undefined) ?? [])
      risks.push({ ...x, token: t.core ? t.symbol : lc(t.address) });
  return risks;
}

/** A trade's fee class: major when both sides are. */
export const feeClassOf = (tin: TokenInfo, tout: TokenInfo): FeeClass => (tin.major && tout.major ? "major" : "other");

type SidesDeps = Pick<Common, "config"> & { tokens: Tokens; market: Market };

/** A core symbol or an address; a trade naming another symbol is TOKEN_NOT_ALLOWED. */
function resolveSide(d: SidesDeps, param: string): Address {
  try {
    return d.tokens.resolve(param);
  } catch (err) {
    if (err instanceof Refusal && err.code === "ADDRESS_REQUIRED")
      throw new Refusal(
        "TOKEN_NOT_ALLOWED",
        `${param} is not a core symbol: name the token by its 0x address`,
        {},
        { cause: err },
      );
    throw err;
  }
}

/** The registry's record of a side (screened on demand): TOKEN_UNKNOWN, SCREEN_UNAVAILABLE, RPC_UNAVAILABLE. */
async function recordOf(d: SidesDeps, param: string, address: Address, who: Who | null): Promise<TokenRecord> {
  let record: TokenRecord;
  try {
    record = (await d.tokens.get(address, {
      shield: false,
      keyId: who?.key.keyId ?? 0,
      clientAddr: who?.clientAddr ?? "quote",
    })) as TokenRecord;
  } catch (err) {
    if (err instanceof Refusal && (err.code === "NOT_A_TOKEN" || err.code === "UNKNOWN_TOKEN"))
      throw new Refusal("TOKEN_UNKNOWN", `${param}: ${err.message}`, {}, { cause: err });
    if (err instanceof Refusal) throw err;
    throw new Refusal(
      "RPC_UNAVAILABLE",
      `the chain RPC did not answer while screening ${param}`,
      {},
      { cause: err, retryAfterS: 2 },
    );
  }
  if (record.screen_status === "UNSCREENED")
    throw new Refusal(
      "SCREEN_UNAVAILABLE",
      `${address} is still being screened; retry in a few seconds`,
      {},
      { retryAfterS: 5 },
    );
  return record;
}

/** A refused call's side as the request named it: complete for core assets, the address otherwise. */
function refOfParam(d: SidesDeps, param: unknown): TokenRef | null {
  if (typeof param !== "string") return null;
  const core = d.config.tokens[param.toUpperCase()] ?? d.market.core(param as Address);
  if (core && (!/^0x/i.test(param) || /^0x[0-9a-fA-F]{40}$/.test(param)))
    return {
      token: core.symbol,
      address: core.address,
      symbol: core.symbol,
      name: core.name,
      decimals: core.decimals,
    };
  return /^0x[0-9a-fA-F]{40}$/.test(param)
    ? { token: lc(param), address: getAddress(param), symbol: null, name: null, decimals: null }
    : { token: param, address: null, symbol: null, name: null, decimals: null };
}

/**
 * The two sides of a trade: a core symbol or an address, resolved through the token registry
 * (screened on demand), with what the fee class and the policy need to know about each.
 */
export function createSides(d: SidesDeps) {
  const majors = new Set(majorSymbols(d.config.tokens));

  async function info(param: string, who: Who | null): Promise<TokenInfo> {
    const address = resolveSide(d, param);
    const core = d.market.core(address);
    const record = core?.native ? null : await recordOf(d, param, address, who);
    const limit = (record?.limits as { max_trade_usd?: number } | undefined)?.max_trade_usd;
    return {
      param,
      address: core ? core.address : address,
      currency: core && (core.native || core.kind === "wrapped") ? zeroAddress : address,
      symbol: core?.symbol ?? record?.symbol ?? "",
      name: core?.name ?? record?.name ?? "",
      decimals: core?.decimals ?? (record?.decimals as number),
      core: !!core,
      major: (core !== undefined && majors.has(core.symbol)) || record?.stock_beacon === true,
      stock: core?.kind === "stock" || record?.stock_beacon === true,
      feed: !!core?.feed,
      record,
      // A blocked tier has no size limit of its own: its severe risks or NO_ROUTE refuse it.
      tierLimitUsd: limit && limit > 0 ? limit : LIMITS.maxNotionalUsd,
    };
  }

  /** Both sides; SAME_TOKEN for one token twice, NO_ROUTE for ETH against WETH (one asset). */
  async function pair(
    r: { token_in: string; token_out: string },
    who: Who | null,
  ): Promise<{ tin: TokenInfo; tout: TokenInfo }> {
    const [tin, tout] = await Promise.all([info(r.token_in, who), info(r.token_out, who)]);
    if (lc(tin.address) === lc(tout.address))
      throw new Refusal("SAME_TOKEN", "token_in and token_out are the same token");
    if (tin.currency === zeroAddress && tout.currency === zeroAddress)
      throw new Refusal("NO_ROUTE", "ETH and WETH are the same asset: wrap or unwrap with WETH9 directly");
    return { tin, tout };
  }

  const ref = (t: TokenInfo): TokenRef => ({
    token: t.core ? t.symbol : lc(t.address),
    address: t.address,
    symbol: t.symbol,
    name: t.name,
    decimals: t.decimals,
  });

  return {
    resolve: (param: string) => resolveSide(d, param),
    info,
    pair,
    ref,
    refOfParam: (param: unknown) => refOfParam(d, param),
  };
}

export type Sides = ReturnType<typeof createSides>;
