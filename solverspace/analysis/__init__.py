"""What every backend reads: the plan, the reference walk, check, funnel, objectives, bounds and the searches."""
