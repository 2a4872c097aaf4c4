"""The one way to a backend: `backends` (the table: `REGISTRY`, `CAPABILITIES`, `get_backend`),
`factories` (each backend made from its options), `auto` (the `auto` policy and its cost model:
the reference or the compiled enumerator per question) and `background` (builds left behind an
answer)."""
