// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Owned} from "./Owned.sol";

/// The Chainalysis sanctions oracle's read interface, settable on the devnet.
contract SanctionsList is Owned {
    event SanctionedAddressesAdded(address[] addrs);
    event SanctionedAddressesRemoved(address[] addrs);

    mapping(address => bool) internal sanctioned;

    constructor() { _initOwner(msg.sender); }

    function isSanctioned(address addr) external view returns (bool) { return sanctioned[addr]; }

    function addToSanctionsList(address[] calldata addrs) external onlyOwner {
        for (uint256 i; i < addrs.length; ++i) sanctioned[addrs[i]] = true;
        emit SanctionedAddressesAdded(addrs);
    }

    function removeFromSanctionsList(address[] calldata addrs) external onlyOwner {
        for (uint256 i; i < addrs.length; ++i) sanctioned[addrs[i]] = false;
        emit SanctionedAddressesRemoved(addrs);
    }
}
