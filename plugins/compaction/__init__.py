"""The default compaction strategy: cut point, structured LLM summaries, branch summaries (``compaction.default``)."""
