"""The agent engine: the agent loop, the session runtime, compaction, retries and tool validation."""
