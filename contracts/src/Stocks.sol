// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./ERC20.sol";
import {Owned} from "./Owned.sol";

/// The issuer's registry: global pause and per-wallet blocks for every stock token.
contract StockRegistry is Owned {
    event Paused(bool paused);
    event WalletBlocked(address indexed account, bool blocked);

    bool public paused;
    mapping(address => bool) public isBlocked;

    constructor() { _initOwner(msg.sender); }

    function setPaused(bool paused_) external onlyOwner {
        paused = paused_;
        emit Paused(paused_);
    }

    function setBlocked(address account, bool blocked) external onlyOwner {
        isBlocked[account] = blocked;
        emit WalletBlocked(account, blocked);
    }
}

/// One beacon shared by every stock token: its owner upgrades them all at once.
contract UpgradeableBeacon is Owned {
    event Upgraded(address indexed implementation);

    address public implementation;

    constructor(address implementation_) {
        _initOwner(msg.sender);
        _setImplementation(implementation_);
    }

    function upgradeTo(address newImplementation) external onlyOwner { _setImplementation(newImplementation); }

    function _setImplementation(address impl) internal {
        require(impl.code.length > 0, "BEACON: not a contract");
        implementation = impl;
        emit Upgraded(impl);
    }
}

/// ERC-1967 beacon proxy: the beacon slot names the beacon, calls run the beacon's implementation.
contract BeaconProxy {
    event BeaconUpgraded(address indexed beacon);

    // bytes32(uint256(keccak256("eip1967.proxy.beacon")) - 1)
    bytes32 internal constant BEACON_SLOT = 0xa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6cb3582b35133d50;

    constructor(address beacon, bytes memory data) {
        assembly { sstore(BEACON_SLOT, beacon) }
        emit BeaconUpgraded(beacon);
        if (data.length > 0) {
            (bool ok, bytes memory ret) = UpgradeableBeacon(beacon).implementation().delegatecall(data);
            if (!ok) assembly { revert(add(ret, 32), mload(ret)) }
        }
    }

    fallback() external payable {
        address beacon;
        assembly { beacon := sload(BEACON_SLOT) }
        address impl = UpgradeableBeacon(beacon).implementation();
        assembly {
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), impl, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}

/// Stock token implementation (runs behind BeaconProxy). Transfers stop while the registry or the
/// token is paused, or when either side is blocked. uiMultiplier carries corporate actions.
contract StockToken is ERC20 {
    event TokenPaused(bool paused);
    event MultiplierUpdated(uint256 multiplier, uint256 effectiveAt);

    StockRegistry public registry;
    bool public tokenPaused;
    uint256 public uiMultiplier;
    uint256 public effectiveAt;
    bool internal initialized;

    modifier onlyIssuer() {
        require(msg.sender == registry.owner(), "NOT_ISSUER");
        _;
    }

    function initialize(string calldata name_, string calldata symbol_, StockRegistry registry_) external {
        require(!initialized, "INITIALIZED");
        initialized = true;
        _initToken(name_, symbol_, 18);
        registry = registry_;
        uiMultiplier = 1e18;
    }

    function paused() public view returns (bool) { return tokenPaused || registry.paused(); }

    function setTokenPaused(bool paused_) external onlyIssuer {
        tokenPaused = paused_;
        emit TokenPaused(paused_);
    }

    function setMultiplier(uint256 multiplier, uint256 effectiveAt_) external onlyIssuer {
        uiMultiplier = multiplier;
        effectiveAt = effectiveAt_;
        emit MultiplierUpdated(multiplier, effectiveAt_);
    }

    function mint(address to, uint256 value) external onlyIssuer { _mint(to, value); }

    function _update(address from, address to, uint256 value) internal override {
        require(!paused(), "STOCK: paused");
        require(!registry.isBlocked(from) && !registry.isBlocked(to), "STOCK: wallet blocked");
        _move(from, to, value);
    }
}
