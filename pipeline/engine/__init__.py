"""The rules engine: boards as bytes, moves, legal pairs, removal, Add numbers, and a Stage.

Pure functions over plain data; nothing here imports from the rest of the pipeline but `errors`.
"""
