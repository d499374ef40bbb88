"""Notifications (extensions section 12): webhooks told of timeline events.

Which events a webhook wants, what it is sent and how it is signed is pure and lives in
`steepy.events.webhooks` (the configuration and the registry use it); the registry's outbox
(`steepy.registry.outbox`) stores a delivery with the event it tells of, in the same
transaction; `delivery.py` is the engine's loop that sends them, at least once.
"""
