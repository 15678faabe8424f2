// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Not a devnet fixture and never deployed: the service's batch reader (lib/chain cappedMulticall),
/// placed at a fixed address by the eth_call's state override. Multicall3's aggregate3 (failures
/// allowed) hands each call all but 1/64 of the gas left, so one call into code that burns gas
/// leaves the calls after it 1/64 each, and two in a row leave the batch itself too little to
/// return: the whole eth_call fails. Here each call gets its own budget and no more, and keeps at
/// most MAX_RETURN bytes of its answer (a returndata bomb would otherwise spend the batch's gas on
/// memory): whatever one callee does, it fails its own call only.
contract CappedAggregator {
    struct Call {
        address target;
        uint256 gas;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    uint256 internal constant MAX_RETURN = 1024;

    function aggregate(Call[] calldata calls) external returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i; i < calls.length; ++i) {
            address target = calls[i].target;
            uint256 budget = calls[i].gas;
            bytes memory data = calls[i].callData;
            bool ok;
            bytes memory ret;
            assembly {
                ok := call(budget, target, 0, add(data, 32), mload(data), 0, 0)
                let n := returndatasize()
                if gt(n, MAX_RETURN) { n := MAX_RETURN }
                ret := mload(0x40)
                mstore(ret, n)
                returndatacopy(add(ret, 32), 0, n)
                mstore(0x40, add(add(ret, 32), and(add(n, 31), not(31))))
            }
            results[i] = Result(ok, ret);
        }
    }
}
