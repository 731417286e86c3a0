"""Research tools (the rating study, its calibration, the telemetry study): run by make targets, not installed."""
