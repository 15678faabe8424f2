import { parseAbi } from "viem";

export const delegationManagerAbi = parseAbi([
  "function redeemDelegations(bytes[] permissionContexts, bytes32[] modes, bytes[] executionCallDatas)",
  "function getDelegationHash((address delegate, address delegator, bytes32 authority, (address enforcer, bytes terms, bytes args)[] caveats, uint256 salt, bytes signature) delegation) pure returns (bytes32)",
  "function disableDelegation((address delegate, address delegator, bytes32 authority, (address enforcer, bytes terms, bytes args)[] caveats, uint256 salt, bytes signature) delegation)",
  "function disabledDelegations(bytes32) view returns (bool)",
  "function getDomainHash() view returns (bytes32)",
  "event RedeemedDelegation(address indexed rootDelegator, address indexed redeemer, (address delegate, address delegator, bytes32 authority, (address enforcer, bytes terms, bytes args)[] caveats, uint256 salt, bytes signature) delegation)",
]);

export const statelessDelegatorAbi = parseAbi([
  "function VERSION() view returns (string)",
  "function NAME() view returns (string)",
  "function delegationManager() view returns (address)",
]);

/** EIP-712 types the DelegationManager hashes (domain: name "DelegationManager", version "1"). */
export const delegationTypes = {
  Delegation: [
    { name: "delegate", type: "address" },
    { name: "delegator", type: "address" },
    { name: "authority", type: "bytes32" },
    { name: "caveats", type: "Caveat[]" },
    { name: "salt", type: "uint256" },
  ],
  Caveat: [
    { name: "enforcer", type: "address" },
    { name: "terms", type: "bytes" },
  ],
} as const;

/** abi type of Delegation[] (a permission context). */
export const delegationArrayParam = {
  type: "tuple[]",
  components: [
    { name: "delegate", type: "address" },
    { name: "delegator", type: "address" },
    { name: "authority", type: "bytes32" },
    {
      name: "caveats",
      type: "tuple[]",
      components: [
        { name: "enforcer", type: "address" },
        { name: "terms", type: "bytes" },
        { name: "args", type: "bytes" },
      ],
    },
    { name: "salt", type: "uint256" },
    { name: "signature", type: "bytes" },
  ],
} as const;

/** A delegation that no other delegation authorises. */
export const ROOT_AUTHORITY = "0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff" as const;
/** ERC-7579 mode: single call, revert on failure. */
export const SINGLE_DEFAULT_MODE = "0x0000000000000000000000000000000000000000000000000000000000000000" as const;
