"""The outbox of notifications (extensions 12): deliveries are written in the transaction
of the event they tell of (`OutboxWriter`, called by the Connector as the events are
written), so a committed event never lacks its delivery, whatever dies next; engines claim
due deliveries under a lease, send them and record the outcome (`SqlOutbox`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Iterable, Sequence

from sqlalchemy import Connection, case, func, insert, or_, select, update

from steepy.model.ids import unique_id
from steepy.model.common import as_utc, iso_time
from steepy.events.webhooks import Subscriber, body, document
from steepy.registry import documents
from steepy.registry.connector import Connector
from steepy.registry.failures import masked
from steepy.registry.records import Delivery, load, utcnow
from steepy.registry.tables import outbox, submissions

PENDING, DELIVERED, FAILED = "PENDING", "DELIVERED", "FAILED"
_o = outbox.c


class OutboxWriter:
    """Writes a delivery per webhook that wants an event, in the event's transaction (the
    Connector's `EventWatcher`)."""

    def __init__(self, webhooks: Sequence[Subscriber]):
        self.webhooks = list(webhooks)

    def _wanting(self, row: dict) -> list[Subscriber]:
        kind = row["kind"]
        maybe = [w for w in self.webhooks if w.may_want(kind)]
        if not maybe:  # most events: their data is not even read
            return []
        data = load(row["data"]) or {}
        return [w for w in maybe if w.wants(kind, data)]

    def wanted(self, rows: list[dict]) -> bool:
        return any(self._wanting(r) for r in rows)

    def written(self, conn: Connection, rows: list[dict], ids: list[int]) -> None:
        now = utcnow()
        out = []
        for row, event_id in zip(rows, ids):
            wanting = self._wanting(row)
            if not wanting:
                continue
            event = documents.event(SimpleNamespace(id=event_id, **row), with_submission=True)
            found = None
            if row["submission_id"] is not None:
                found = conn.execute(select(submissions.c.id, submissions.c.name,
                                            submissions.c.status)
                                     .where(submissions.c.id == row["submission_id"])).first()
            about = None if found is None else {"id": found.id, "name": found.name,
                                                "status": found.status}
            text = body(document(event, about)).decode("utf-8")
            out += [{"key": unique_id(), "event_id": event_id, "kind": row["kind"],
                     "submission_id": row["submission_id"], "url": w.url, "body": text,
                     "status": PENDING, "attempts": 0, "created_time": now, "next_try": now}
                    for w in wanting]
        if out:
            conn.execute(insert(outbox), out)


def _due(now: datetime, urls: list[str]):
    return (_o.status == PENDING, _o.next_try <= now, _o.url.in_(urls),
            or_(_o.claimed_until.is_(None), _o.claimed_until < now))


def _listing(row) -> dict:
    """A delivery as every listing shows it (CLI, API, UI): its URL without its password and
    tokens (the delivery itself goes to the real one)."""
    out = {"id": row.id, "key": row.key, "eventId": row.event_id, "event": row.kind,
           "submissionId": row.submission_id, "url": masked(row.url), "status": row.status,
           "attempts": row.attempts, "createdTime": iso_time(as_utc(row.created_time)),
           "lastTry": iso_time(as_utc(row.last_try)), "lastError": row.last_error,
           "nextTry": iso_time(as_utc(row.next_try)) if row.status == PENDING else None,
           "deliveredTime": iso_time(as_utc(row.delivered_time))}
    return {k: v for k, v in out.items() if v is not None}


class SqlOutbox:
    def __init__(self, db: Connector, webhooks: Sequence[Subscriber] = ()):
        self.db = db
        if webhooks:  # this process writes deliveries with its events
            db.watcher = OutboxWriter(webhooks)

    def claim_deliveries(self, owner: str, urls: Iterable[str], limit: int,
                         lease_s: float) -> list[Delivery]:
        """Take up to `limit` due deliveries to these webhooks for `lease_s` seconds (the
        try counts from now); nobody else takes them meanwhile."""
        urls = list(urls)
        now = utcnow()
        due = select(_o.id).where(*_due(now, urls)).order_by(_o.next_try, _o.id).limit(limit)
        with self.db.read() as conn:  # usually nothing is due: don't take the write lock
            if conn.execute(due.limit(1)).first() is None:
                return []
        with self.db.write() as conn:
            ids = list(conn.execute(self.db.dialect.locked(due)).scalars())
            if not ids:
                return []
            conn.execute(update(outbox).where(_o.id.in_(ids), *_due(now, urls)).values(
                claimed_by=owner, claimed_until=now + timedelta(seconds=lease_s),
                attempts=_o.attempts + 1, last_try=now))
            # the rows are ours alone: locked (PostgreSQL) or under the write lock (SQLite)
            rows = conn.execute(select(outbox).where(_o.id.in_(ids)).order_by(_o.id)).all()
        return [Delivery(r.id, r.key, r.kind, r.url, r.body, r.attempts) for r in rows]

    def delivered(self, delivery_id: int) -> None:
        """A receiver took it (2xx): done, whoever held it."""
        with self.db.write() as conn:
            conn.execute(update(outbox).where(_o.id == delivery_id, _o.status == PENDING)
                         .values(status=DELIVERED, delivered_time=utcnow(), last_error=None,
                                 claimed_by=None, claimed_until=None))

    def delivery_failed(self, delivery_id: int, owner: str, error: str,
                        next_try: datetime | None) -> None:
        """A try of `owner` failed: due again at `next_try`, or FAILED for good (None). A
        delivery that another engine holds now (our lease ran out) is left to it."""
        values = {"last_error": error, "claimed_by": None, "claimed_until": None}
        if next_try is None:
            values.update(status=FAILED, next_try=None)
        else:
            values["next_try"] = next_try
        with self.db.write() as conn:
            conn.execute(update(outbox).where(_o.id == delivery_id, _o.status == PENDING,
                                              _o.claimed_by == owner).values(**values))

    def next_delivery_due(self, urls: Iterable[str]) -> datetime | None:
        """When the next PENDING delivery to these webhooks is due (or its lease ends)."""
        now = utcnow()
        when = case((_o.claimed_until > now, _o.claimed_until), else_=_o.next_try)
        with self.db.read() as conn:
            return as_utc(conn.execute(select(func.min(when)).where(
                _o.status == PENDING, _o.url.in_(list(urls)))).scalar())

    def deliveries(self, failed: bool = False, size: int = 20,
                   offset: int = 0) -> tuple[list[dict], int]:
        """Deliveries, newest first (with `failed`, those that gave up), and their number."""
        where = [_o.status == FAILED] if failed else []
        with self.db.read() as conn:
            total = conn.execute(select(func.count()).select_from(outbox).where(*where)).scalar()
            rows = conn.execute(select(outbox).where(*where).order_by(_o.id.desc())
                                .limit(size).offset(offset)).all()
        return [_listing(r) for r in rows], int(total or 0)
