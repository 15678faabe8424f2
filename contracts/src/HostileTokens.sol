// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./ERC20.sol";
import {Owned} from "./Owned.sol";

/// Screening fixture: buys work, sells revert. A sale into a v4 pool is a transfer to the
/// PoolManager; only the owner (who seeds liquidity) may make one.
contract HoneypotToken is ERC20, Owned {
    address public immutable poolManager;

    constructor(string memory name_, string memory symbol_, address poolManager_) {
        _initToken(name_, symbol_, 18);
        _initOwner(msg.sender);
        poolManager = poolManager_;
    }

    function mint(address to, uint256 value) external onlyOwner { _mint(to, value); }

    function _update(address from, address to, uint256 value) internal override {
        if (to == poolManager && from != owner) revert("TRANSFER_FAILED");
        _move(from, to, value);
    }
}

/// Screening fixture: every transfer not touching the owner pays `taxBps` to the owner.
contract FeeOnTransferToken is ERC20, Owned {
    uint256 public immutable taxBps;

    constructor(string memory name_, string memory symbol_, uint256 taxBps_) {
        _initToken(name_, symbol_, 18);
        _initOwner(msg.sender);
        taxBps = taxBps_;
    }

    function mint(address to, uint256 value) external onlyOwner { _mint(to, value); }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || from == owner || to == owner) return _move(from, to, value);
        uint256 tax = value * taxBps / 10_000;
        _move(from, owner, tax);
        _move(from, to, value - tax);
    }
}

/// ERC-1967 proxy whose admin can swap the implementation (screening: TOKEN_CHANGED).
contract UpgradeableProxy {
    event Upgraded(address indexed implementation);
    event AdminChanged(address previousAdmin, address newAdmin);

    // bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1)
    bytes32 internal constant IMPLEMENTATION_SLOT = 0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc;
    // bytes32(uint256(keccak256("eip1967.proxy.admin")) - 1)
    bytes32 internal constant ADMIN_SLOT = 0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103;

    constructor(address implementation, address admin, bytes memory data) {
        assembly {
            sstore(IMPLEMENTATION_SLOT, implementation)
            sstore(ADMIN_SLOT, admin)
        }
        emit Upgraded(implementation);
        emit AdminChanged(address(0), admin);
        if (data.length > 0) {
            (bool ok, bytes memory ret) = implementation.delegatecall(data);
            if (!ok) assembly { revert(add(ret, 32), mload(ret)) }
        }
    }

    /// Selector-clashing with the implementation is the usual transparent-proxy concern; the
    /// fixture keeps one admin entry point and forwards everything else.
    function upgradeProxyTo(address implementation) external {
        address admin;
        assembly { admin := sload(ADMIN_SLOT) }
        require(msg.sender == admin, "NOT_ADMIN");
        assembly { sstore(IMPLEMENTATION_SLOT, implementation) }
        emit Upgraded(implementation);
    }

    fallback() external payable {
        assembly {
            let impl := sload(IMPLEMENTATION_SLOT)
            calldatacopy(0, 0, calldatasize())
            let ok := delegatecall(gas(), impl, 0, calldatasize(), 0, 0)
            returndatacopy(0, 0, returndatasize())
            switch ok
            case 0 { revert(0, returndatasize()) }
            default { return(0, returndatasize()) }
        }
    }
}

/// First implementation behind UpgradeableProxy: a plain token.
contract ProxyTokenV1 is ERC20, Owned {
    bool internal initialized;

    function initialize(string calldata name_, string calldata symbol_, address owner_) external {
        require(!initialized, "INITIALIZED");
        initialized = true;
        _initToken(name_, symbol_, 18);
        _initOwner(owner_);
    }

    function mint(address to, uint256 value) external onlyOwner { _mint(to, value); }

    function version() external pure virtual returns (uint256) { return 1; }
}

/// Second implementation: the owner can now freeze any holder (what screening must notice).
contract ProxyTokenV2 is ProxyTokenV1 {
    mapping(address => bool) public frozen;

    function setFrozen(address account, bool value) external onlyOwner { frozen[account] = value; }

    function version() external pure override returns (uint256) { return 2; }

    function _update(address from, address to, uint256 value) internal override {
        require(!frozen[from], "FROZEN");
        _move(from, to, value);
    }
}

/// Screening fixture: an ERC-20 whose balances live in a namespaced struct (ERC-7201 style), not in a
/// mapping at a low slot, so state overrides cannot fake a balance (DRY_RUN_UNFUNDABLE).
contract NamespacedToken is Owned {
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    struct Layout {
        mapping(address => uint256) balances;
        mapping(address => mapping(address => uint256)) allowances;
        uint256 supply;
        string name;
        string symbol;
    }

    // keccak256("pit.devnet.namespaced-token") - 1
    bytes32 private constant LAYOUT = bytes32(uint256(keccak256("pit.devnet.namespaced-token")) - 1);

    function _l() private pure returns (Layout storage l) {
        bytes32 slot = LAYOUT;
        assembly { l.slot := slot }
    }

    constructor(string memory name_, string memory symbol_) {
        _initOwner(msg.sender);
        _l().name = name_;
        _l().symbol = symbol_;
    }

    function name() external view returns (string memory) { return _l().name; }
    function symbol() external view returns (string memory) { return _l().symbol; }
    function decimals() external pure returns (uint8) { return 18; }
    function totalSupply() external view returns (uint256) { return _l().supply; }
    function balanceOf(address a) external view returns (uint256) { return _l().balances[a]; }
    function allowance(address o, address s) external view returns (uint256) { return _l().allowances[o][s]; }

    function mint(address to, uint256 value) external onlyOwner {
        _l().supply += value;
        _l().balances[to] += value;
        emit Transfer(address(0), to, value);
    }

    function approve(address spender, uint256 value) external returns (bool) {
        _l().allowances[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = _l().allowances[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "ALLOWANCE");
            _l().allowances[from][msg.sender] = allowed - value;
        }
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        require(_l().balances[from] >= value, "BALANCE");
        _l().balances[from] -= value;
        _l().balances[to] += value;
        emit Transfer(from, to, value);
    }
}

/// Burns gas in pairing checks (the bn256 precompile: the most node time per gas): under the node's
/// default call gas (30M on anvil) a burning read takes seconds, under a small explicit gas cap it
/// runs out of gas at once.
abstract contract BurnsGas {
    function _burnGas(uint256 amount) internal view {
        uint256 start = gasleft();
        // Four pairs of the G1 and G2 generators (EIP-197 encoding).
        bytes memory pair = abi.encode(
            uint256(1), uint256(2),
            uint256(11559732032986387107991004021392285783925812861821192530917403151452391805634),
            uint256(10857046999023057135944570762232829481370756359578518086990519993285655852781),
            uint256(4082367875863433681332203403145435568316851327593401208105741076214120093531),
            uint256(8495653923123431417604973247489272438418190587263600148770280649306958101930)
        );
        bytes memory input = abi.encodePacked(pair, pair, pair, pair);
        while (start - gasleft() < amount) {
            (bool ok, ) = address(8).staticcall(input);
            require(ok, "pairing input");
        }
    }
}

/// Availability fixture: name() and symbol() burn `burnGas` of gas before answering.
/// decimals, totalSupply, balanceOf and transfers are plain.
contract GasBurnerToken is ERC20, Owned, BurnsGas {
    uint256 public immutable burnGas;

    constructor(string memory name_, string memory symbol_, uint256 burnGas_) {
        _initToken(name_, symbol_, 18);
        _initOwner(msg.sender);
        burnGas = burnGas_;
    }

    function mint(address to, uint256 value) external onlyOwner { _mint(to, value); }

    function name() public view override returns (string memory) { _burnGas(burnGas); return _name; }
    function symbol() public view override returns (string memory) { _burnGas(burnGas); return _symbol; }
}

/// Availability fixture: honest in name, symbol, decimals and totalSupply (screening passes it), but
/// balanceOf and allowance burn `burnGas` before answering: what a trade's snapshot reads of the
/// wallet. Transfers and approvals are plain.
contract BalanceBurnerToken is Owned, BurnsGas {
    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    uint256 public immutable burnGas;
    mapping(address => uint256) internal balances;
    mapping(address => mapping(address => uint256)) internal allowances;

    constructor(string memory name_, string memory symbol_, uint256 burnGas_) {
        _initOwner(msg.sender);
        name = name_;
        symbol = symbol_;
        burnGas = burnGas_;
    }

    function balanceOf(address a) external view returns (uint256) { _burnGas(burnGas); return balances[a]; }
    function allowance(address o, address s) external view returns (uint256) { _burnGas(burnGas); return allowances[o][s]; }

    function mint(address to, uint256 value) external onlyOwner {
        totalSupply += value;
        balances[to] += value;
        emit Transfer(address(0), to, value);
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowances[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        require(balances[msg.sender] >= value, "BALANCE");
        balances[msg.sender] -= value;
        balances[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }
}
