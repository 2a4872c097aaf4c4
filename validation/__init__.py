"""Cross-validation of solverspace's backends (`validate`), order-independent digests of sets of
configurations (`digest`) and random space files for testing (`generate`, needs Hypothesis)."""
from solverspace.validation.validate import Counterexample, Outcome, Report, validate, validate_source

__all__ = ["Counterexample", "Outcome", "Report", "validate", "validate_source"]
