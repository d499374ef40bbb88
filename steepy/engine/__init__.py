"""The engine: one steepy process's controller, scheduler, agents and time-based work, with
the group commit of the hot path and the live feed they share."""
