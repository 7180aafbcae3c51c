"""Test support shared by the suites: the scripted LLM server and its wire formats."""
