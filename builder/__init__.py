"""builder."""
