// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

abstract contract Owned {
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    address public owner;

    modifier onlyOwner() {
        require(msg.sender == owner, "NOT_OWNER");
        _;
    }

    function _initOwner(address owner_) internal {
        owner = owner_;
        emit OwnershipTransferred(address(0), owner_);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }
}
