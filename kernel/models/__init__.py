"""The model registry and the resolution of model names and patterns."""
