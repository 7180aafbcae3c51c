"""The data model: records, messages and content blocks, stream and agent events, and their JSON wire form."""
