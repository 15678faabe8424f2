// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./ERC20.sol";
import {Owned} from "./Owned.sol";

/// Plain mintable token: USDG (6 decimals), the BTC asset (8), the partner token (18) on the devnet.
contract TestToken is ERC20, Owned {
    constructor(string memory name_, string memory symbol_, uint8 decimals_) {
        _initToken(name_, symbol_, decimals_);
        _initOwner(msg.sender);
    }

    function mint(address to, uint256 value) external onlyOwner { _mint(to, value); }
}
