"""The C/OpenMP backend: generated C, built through cffi, run in-process."""
