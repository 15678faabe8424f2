// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Owned} from "./Owned.sol";

/// The partner's agent registry: agent id -> token, symbol, owner, agent wallet.
contract PartnerAgentVault is Owned {
    event AgentRegistered(uint256 indexed agentId, address indexed token, address indexed owner, address agentWallet);
    event AgentWalletChanged(uint256 indexed agentId, address agentWallet);

    struct Agent { address token; string symbol; string name; address owner; address agentWallet; }

    uint256 public agentCount;
    mapping(uint256 => Agent) internal _agents;
    /// wallet -> agent id (0 = none); holds both owners and agent wallets.
    mapping(address => uint256) public agentIdOf;

    constructor() { _initOwner(msg.sender); }

    function register(address token, string calldata symbol, string calldata name, address agentOwner, address agentWallet)
        external onlyOwner returns (uint256 id)
    {
        id = ++agentCount;
        _agents[id] = Agent(token, symbol, name, agentOwner, agentWallet);
        agentIdOf[agentOwner] = id;
        agentIdOf[agentWallet] = id;
        emit AgentRegistered(id, token, agentOwner, agentWallet);
    }

    function setAgentWallet(uint256 id, address agentWallet) external onlyOwner {
        delete agentIdOf[_agents[id].agentWallet];
        _agents[id].agentWallet = agentWallet;
        agentIdOf[agentWallet] = id;
        emit AgentWalletChanged(id, agentWallet);
    }

    function getAgent(uint256 id) external view returns (Agent memory) {
        require(id != 0 && id <= agentCount, "NO_AGENT");
        return _agents[id];
    }
}
