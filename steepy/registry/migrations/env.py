"""Alembic environment: steepy runs migrations itself, on the connection it opened."""

from alembic import context

from steepy.registry.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
