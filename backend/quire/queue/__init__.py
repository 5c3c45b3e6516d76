"""Queue: the Dramatiq broker, the thin actor, execution control and recovery."""
