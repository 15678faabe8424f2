// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "./ERC20.sol";
import {Owned} from "./Owned.sol";

/// Token minted in full to its launchpad curve at creation.
contract LaunchToken is ERC20 {
    address public immutable curve;
    address public immutable creator;

    constructor(string memory name_, string memory symbol_, address creator_, uint256 supply) {
        _initToken(name_, symbol_, 18);
        curve = msg.sender;
        creator = creator_;
        _mint(msg.sender, supply);
    }
}

/// Launchpad bonding curve (constant product over virtual reserves). Fee modes: 0 = protocol
/// fee only, 1 = fee split with the creator (creator tax). A snipe tax starts at
/// `SNIPE_TAX_START_BPS` and falls linearly to zero over `SNIPE_WINDOW_S` after launch. The token
/// graduates (curve trading stops) once the curve holds `graduationWei` of real ETH.
contract LaunchpadCurve is Owned {
    event TokenLaunched(
        address indexed token, address indexed creator, string name, string symbol, uint8 feeMode, uint256 virtualEth, uint256 virtualToken
    );
    event Trade(
        address indexed token, address indexed trader, bool isBuy, uint256 ethAmount, uint256 tokenAmount,
        uint256 fee, uint256 virtualEth, uint256 virtualToken
    );
    event FeeSplit(address indexed token, uint256 protocolFee, uint256 creatorFee, uint256 snipeTax);
    event Graduated(address indexed token, uint256 realEth);

    struct Curve {
        address creator;
        uint8 feeMode;
        bool graduated;
        uint64 launchedAt;
        uint256 virtualEth;
        uint256 virtualToken;
        uint256 realEth;
    }

    uint256 public constant SUPPLY = 1_000_000_000e18;
    uint256 public constant INITIAL_VIRTUAL_ETH = 30 ether;
    uint256 public constant INITIAL_VIRTUAL_TOKEN = 1_073_000_000e18;
    uint256 public constant PROTOCOL_FEE_BPS = 100;
    uint256 public constant CREATOR_FEE_BPS = 50;
    uint256 public constant SNIPE_TAX_START_BPS = 2_000;
    uint256 public constant SNIPE_WINDOW_S = 60;

    uint256 public immutable graduationWei;
    address public feeRecipient;
    mapping(address => Curve) public curves;
    address[] public tokens;

    constructor(uint256 graduationWei_, address feeRecipient_) {
        _initOwner(msg.sender);
        graduationWei = graduationWei_;
        feeRecipient = feeRecipient_;
    }

    function tokenCount() external view returns (uint256) { return tokens.length; }

    function launch(string calldata name_, string calldata symbol_, uint8 feeMode) external returns (address token) {
        require(feeMode <= 1, "FEE_MODE");
        token = address(new LaunchToken(name_, symbol_, msg.sender, SUPPLY));
        curves[token] = Curve(msg.sender, feeMode, false, uint64(block.timestamp), INITIAL_VIRTUAL_ETH, INITIAL_VIRTUAL_TOKEN, 0);
        tokens.push(token);
        emit TokenLaunched(token, msg.sender, name_, symbol_, feeMode, INITIAL_VIRTUAL_ETH, INITIAL_VIRTUAL_TOKEN);
    }

    /// Fee in bps of the ETH side for a trade now: protocol + creator + snipe tax.
    function feeBps(address token) public view returns (uint256 protocolBps, uint256 creatorBps, uint256 snipeBps) {
        Curve storage c = curves[token];
        require(c.launchedAt != 0, "UNKNOWN_TOKEN");
        protocolBps = PROTOCOL_FEE_BPS;
        creatorBps = c.feeMode == 1 ? CREATOR_FEE_BPS : 0;
        uint256 age = block.timestamp - c.launchedAt;
        snipeBps = age >= SNIPE_WINDOW_S ? 0 : SNIPE_TAX_START_BPS * (SNIPE_WINDOW_S - age) / SNIPE_WINDOW_S;
    }

    function quoteBuy(address token, uint256 ethIn) public view returns (uint256 tokensOut, uint256 fee) {
        (uint256 p, uint256 cr, uint256 s) = feeBps(token);
        fee = ethIn * (p + cr + s) / 10_000;
        Curve storage c = curves[token];
        tokensOut = c.virtualToken * (ethIn - fee) / (c.virtualEth + ethIn - fee);
    }

    function quoteSell(address token, uint256 tokensIn) public view returns (uint256 ethOut, uint256 fee) {
        (uint256 p, uint256 cr, uint256 s) = feeBps(token);
        Curve storage c = curves[token];
        uint256 gross = c.virtualEth * tokensIn / (c.virtualToken + tokensIn);
        fee = gross * (p + cr + s) / 10_000;
        ethOut = gross - fee;
    }

    function buy(address token, uint256 minTokensOut, address to) external payable returns (uint256 tokensOut) {
        Curve storage c = curves[token];
        require(!c.graduated, "GRADUATED");
        uint256 fee;
        (tokensOut, fee) = quoteBuy(token, msg.value);
        require(tokensOut >= minTokensOut, "SLIPPAGE");
        uint256 net = msg.value - fee;
        c.virtualEth += net;
        c.virtualToken -= tokensOut;
        c.realEth += net;
        _splitFee(token, fee);
        LaunchToken(token).transfer(to, tokensOut);
        emit Trade(token, msg.sender, true, msg.value, tokensOut, fee, c.virtualEth, c.virtualToken);
        if (c.realEth >= graduationWei) {
            c.graduated = true;
            emit Graduated(token, c.realEth);
        }
    }

    function sell(address token, uint256 tokensIn, uint256 minEthOut, address to) external returns (uint256 ethOut) {
        Curve storage c = curves[token];
        require(!c.graduated, "GRADUATED");
        uint256 fee;
        (ethOut, fee) = quoteSell(token, tokensIn);
        require(ethOut >= minEthOut, "SLIPPAGE");
        LaunchToken(token).transferFrom(msg.sender, address(this), tokensIn);
        uint256 gross = ethOut + fee;
        c.virtualEth -= gross;
        c.virtualToken += tokensIn;
        c.realEth -= gross;
        _splitFee(token, fee);
        (bool ok,) = to.call{value: ethOut}("");
        require(ok, "ETH_SEND");
        emit Trade(token, msg.sender, false, ethOut, tokensIn, fee, c.virtualEth, c.virtualToken);
    }

    function _splitFee(address token, uint256 fee) internal {
        if (fee == 0) return;
        (uint256 p, uint256 cr, uint256 s) = feeBps(token);
        uint256 total = p + cr + s;
        uint256 creatorFee = fee * cr / total;
        uint256 snipeTax = fee * s / total;
        uint256 protocolFee = fee - creatorFee - snipeTax;
        // The snipe tax goes to the protocol; the creator gets only its own share.
        if (creatorFee > 0) {
            (bool ok,) = curves[token].creator.call{value: creatorFee}("");
            require(ok, "ETH_SEND");
        }
        (bool ok2,) = feeRecipient.call{value: protocolFee + snipeTax}("");
        require(ok2, "ETH_SEND");
        emit FeeSplit(token, protocolFee, creatorFee, snipeTax);
    }
}
