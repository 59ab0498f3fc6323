"""What the papers compare against (randomized response, Mondrian, truncation, flowgraph,
...). Registered exactly like mechanisms, with ``role="baseline"``."""
