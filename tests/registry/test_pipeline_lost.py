"""A pipeline the server's end leaves unfinished (PostgreSQL stopped while a pipelined read
was answered: `AdminShutdown' at its end, then `cannot exit pipeline mode while busy'):
its connection can send nothing any more, not even the ROLLBACK with which SQLAlchemy's pool
takes it back, and the pool logged that with a traceback (`Exception during reset or
similar': a `steepy serve' whose log must hold none, tests/http/test_database_faults.py, on
a loaded machine). The connection is closed as the error passes: the pool then sees a lost
connection and discards it. The server's stop cannot be timed to land inside a pipeline,
so this is a double of psycopg's connection."""

from __future__ import annotations

import pytest
from psycopg import pq

from steepy.registry.dialect import pipelined


class _Driver:
    """psycopg's connection as far as a pipeline goes: its exit fails, and leaves the
    pipeline on (`busy') or off (an error the pipeline could sync, such as a bad statement)."""

    def __init__(self, left_on: bool):
        self.closed = False
        self.pgconn = type("PGconn", (), {})()
        self.pgconn.pipeline_status = pq.PipelineStatus.OFF
        self.left_on = left_on

    def pipeline(self):
        driver = self

        class Pipeline:
            def __enter__(self):
                driver.pgconn.pipeline_status = pq.PipelineStatus.ON

            def __exit__(self, *exc):
                if not driver.left_on:
                    driver.pgconn.pipeline_status = pq.PipelineStatus.OFF
                raise RuntimeError("terminating connection due to administrator command")
        return Pipeline()

    def close(self):
        self.closed = True


@pytest.mark.parametrize("left_on", [True, False])
def test_a_pipeline_left_busy_closes_its_connection(left_on: bool) -> None:
    driver = _Driver(left_on)
    with pytest.raises(RuntimeError):
        with pipelined(driver, postgres=True):
            pass
    assert driver.closed is left_on  # one the pipeline could finish stays open for a rollback
