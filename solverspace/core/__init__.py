"""Shared by every layer: errors, option checks, output files and formats, order values."""
