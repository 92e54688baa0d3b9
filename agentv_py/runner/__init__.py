"""Running things: subprocesses, targets, and the engine that drives a whole eval."""
