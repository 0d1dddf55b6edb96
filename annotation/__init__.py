"""annotation."""
