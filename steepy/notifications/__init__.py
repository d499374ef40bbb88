"""Notifications (extensions section 12): webhooks and e-mail told of timeline events.

Which events a webhook wants, what it is sent and how it is signed is pure and lives in
`steepy.events.webhooks` (the configuration and the registry use it), e-mail's in
`steepy.events.email`, templates in `steepy.events.templates`; the registry's outbox
(`steepy.registry.outbox`) stores a delivery with the event it tells of, in the same
transaction; `delivery.py` is the engine's loop that sends them, at least once (`smtp.py`
hands e-mail to the SMTP server).
"""
