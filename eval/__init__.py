"""Scores embedding models on gendered job-title test sets: symmetry (AO, RBO), parity and MAP.

Kept light: importing ``eval`` loads nothing heavy; submodules load what they need.
"""

__version__ = "0.1.0"
