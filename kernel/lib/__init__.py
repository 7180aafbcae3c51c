"""Helpers every plugin kind may use: JSON as JavaScript writes it, UTF-16 lengths, fuzzy matching, images, processes, abort signals, partial JSON and redaction."""
