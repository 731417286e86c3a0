"""Generation: proposals of boards (random, constructive) and the generator that keeps those on target."""
