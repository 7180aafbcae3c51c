"""What piko tells a user who has no model or no key yet: one screen on how to get going."""

from __future__ import annotations

GETTING_STARTED = """\
To get going, do one of these:

  1. Set an API key for a provider, for example
       export ANTHROPIC_API_KEY=sk-ant-...      (or OPENAI_API_KEY, GEMINI_API_KEY, ...)
  2. Run `pi` and type /login to sign in with a Claude Pro/Max account or store an API key.
  3. Use a local server such as Ollama: add to ~/.pi/agent/models.json
       {"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1",
         "api": "openai-completions", "apiKey": "ollama",
         "models": [{"id": "qwen2.5-coder:7b"}]}}}
     then run: pi --provider ollama --model qwen2.5-coder:7b
  4. Try piko offline right now with the scripted demo provider:
       pi --provider faux -p "hello"

Providers and their variables: docs/providers.md; custom models: docs/models.md"""


def no_models_message() -> str:
    """For ``--list-models`` and a start-up without any usable model."""
    return "No models available.\n\n" + GETTING_STARTED


def no_model_selected_message() -> str:
    return "No model selected.\n\n" + GETTING_STARTED


def no_api_key_message(provider: str, env_var: str | None = None) -> str:
    """One clear line naming the variable to set, then the getting-started screen."""
    first = f"No API key found for {provider}."
    if env_var:
        first += f" Set {env_var}, or run /login."
    return first + "\n\n" + GETTING_STARTED
