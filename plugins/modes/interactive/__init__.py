"""The interactive terminal mode (``modes.interactive``): editor, streamed rendering, slash commands."""
