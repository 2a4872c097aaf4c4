"""The language: the expression IR, lowering, evaluation, the DSL, the model and what is known about it."""
