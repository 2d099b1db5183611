"""The core below passes and lowerings: pass errors and their notes, the
pass registry, the one pipeline builder and the named routes."""
