"""Session files: entries, reading and writing, the context a branch holds, listing and migrations."""
