import { getAddress, type Address, type Hex, type PublicClient } from "viem";

/** EIP-1967 storage slots: a proxy's implementation, and a beacon proxy's beacon. */
export const IMPL_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc";
export const BEACON_SLOT = "0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50";

/** The address a slot holds, or null for an empty slot. */
export const slotAddress = (slotValue: Hex | undefined): Address | null => {
  if (!slotValue || /^0x0*$/.test(slotValue)) return null;
  return getAddress(`0x${slotValue.slice(-40)}`);
};

/** The beacon behind a beacon proxy (null when the slot is empty). */
export async function beaconOf(chain: Pick<PublicClient, "getStorageAt">, token: Address): Promise<Address | null> {
  return slotAddress(await chain.getStorageAt({ address: token, slot: BEACON_SLOT }));
}
