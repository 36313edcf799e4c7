"""Events: who plays whom, at which seat, on which board — pure planning with no I/O."""
