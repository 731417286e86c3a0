"""Research tools (the rating study, its calibration): run by make targets, not installed."""
