// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// Benchmark fixture: many real v4 swaps in one transaction (one unlock, deltas settled once), so
/// the indexer benchmark can put tens of thousands of Swap events on the devnet quickly.
interface IPoolManagerLite {
    struct PoolKey { address currency0; address currency1; uint24 fee; int24 tickSpacing; address hooks; }
    struct SwapParams { bool zeroForOne; int256 amountSpecified; uint160 sqrtPriceLimitX96; }
    function unlock(bytes calldata data) external returns (bytes memory);
    function swap(PoolKey memory key, SwapParams memory params, bytes calldata hookData) external returns (int256);
    function sync(address currency) external;
    function settle() external payable returns (uint256);
    function take(address currency, address to, uint256 amount) external;
}

interface IERC20Lite {
    function transfer(address to, uint256 value) external returns (bool);
}

contract SwapBatcher {
    uint160 internal constant MIN_SQRT_PRICE = 4295128739;
    uint160 internal constant MAX_SQRT_PRICE = 1461446703485210103287273052203988822378723970342;
    IPoolManagerLite public immutable poolManager;

    constructor(IPoolManagerLite poolManager_) { poolManager = poolManager_; }

    /// `count` alternating exact-input swaps on an ERC-20/ERC-20 pool: `amount0` of currency0 in,
    /// then `amount1` of currency1 in, and so on.
    function run(IPoolManagerLite.PoolKey calldata key, uint256 count, uint256 amount0, uint256 amount1) external {
        poolManager.unlock(abi.encode(key, count, amount0, amount1));
    }

    function unlockCallback(bytes calldata data) external returns (bytes memory) {
        require(msg.sender == address(poolManager), "ONLY_POOL_MANAGER");
        (IPoolManagerLite.PoolKey memory key, uint256 count, uint256 amount0, uint256 amount1) =
            abi.decode(data, (IPoolManagerLite.PoolKey, uint256, uint256, uint256));
        int256 net0;
        int256 net1;
        for (uint256 i; i < count; ++i) {
            bool zeroForOne = i % 2 == 0;
            int256 delta = poolManager.swap(
                key,
                IPoolManagerLite.SwapParams(zeroForOne, -int256(zeroForOne ? amount0 : amount1), zeroForOne ? MIN_SQRT_PRICE + 1 : MAX_SQRT_PRICE - 1),
                ""
            );
            net0 += int256(delta) >> 128;
            net1 += int256(int128(delta));
        }
        _resolve(key.currency0, net0);
        _resolve(key.currency1, net1);
        return "";
    }

    function _resolve(address currency, int256 net) internal {
        if (net < 0) {
            poolManager.sync(currency);
            IERC20Lite(currency).transfer(address(poolManager), uint256(-net));
            poolManager.settle();
        } else if (net > 0) {
            poolManager.take(currency, address(this), uint256(net));
        }
    }
}
