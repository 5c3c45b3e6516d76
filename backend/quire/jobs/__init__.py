"""Jobs: the durable record, its state machine and the retry policy."""
