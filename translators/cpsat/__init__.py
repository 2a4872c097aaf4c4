"""The OR-Tools CP-SAT backend: counting, checking, optimising and sampling."""
