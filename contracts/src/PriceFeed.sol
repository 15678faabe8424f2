// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Owned} from "./Owned.sol";

/// Chainlink-style feed (AggregatorV3Interface + the legacy AnswerUpdated/NewRound events),
/// settable by its owner so the devnet can move marks and make them stale.
contract PriceFeed is Owned {
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);
    event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt);

    struct Round { int256 answer; uint256 startedAt; uint256 updatedAt; }

    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;
    uint80 public latestRound;
    mapping(uint80 => Round) internal rounds;

    constructor(uint8 decimals_, string memory description_, int256 initialAnswer) {
        decimals = decimals_;
        description = description_;
        _initOwner(msg.sender);
        _record(initialAnswer, block.timestamp);
    }

    function setAnswer(int256 answer) external onlyOwner { _record(answer, block.timestamp); }

    /// Lets the devnet write a round with an old timestamp (stale marks).
    function setAnswerAt(int256 answer, uint256 updatedAt) external onlyOwner { _record(answer, updatedAt); }

    function _record(int256 answer, uint256 updatedAt) internal {
        uint80 id = latestRound + 1;
        latestRound = id;
        rounds[id] = Round(answer, updatedAt, updatedAt);
        emit NewRound(id, msg.sender, updatedAt);
        emit AnswerUpdated(answer, id, updatedAt);
    }

    function latestAnswer() external view returns (int256) { return rounds[latestRound].answer; }
    function latestTimestamp() external view returns (uint256) { return rounds[latestRound].updatedAt; }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return getRoundData(latestRound);
    }

    function getRoundData(uint80 roundId) public view returns (uint80, int256, uint256, uint256, uint80) {
        Round memory r = rounds[roundId];
        require(r.updatedAt != 0, "No data present");
        return (roundId, r.answer, r.startedAt, r.updatedAt, roundId);
    }
}
