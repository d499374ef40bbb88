"""The engine: one steepy process's controller, scheduler, agents and time-based work, with
the group commit of the hot path, the live feed, and the process's one change watcher
(changes.py) that wakes the engine and the feed alike."""
