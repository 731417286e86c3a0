"""Play telemetry: what the game's players did with shipped stages, against what was rated.

`records` reads attempt records (JSON Lines, CSV, Parquet; or the aggregated form) with DuckDB
and counts them per puzzle; `simulate` writes telemetry by playing stages with the rating's
player models; `observed` compares observed loss rates with the rated ones; `calibrate` fits a
rating profile (`pipeline.rating.profile`) to them. docs/telemetry.md is the user's guide.
"""
