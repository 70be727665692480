"""SQLite storage of survey answers.

One row per (study, participant, question): the first answer a participant submits for a
question is kept (a resubmitted form -- back button, double click -- does not overwrite it), with
an ISO-8601 UTC timestamp.  Every call opens its own short-lived connection, so the store can be
shared by the threads of the web server.
"""
from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from .. import io

EXPORT_COLUMNS = ["study_id", "participant_id", "question_id", "answer", "timestamp"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    study_id       TEXT NOT NULL,
    participant_id TEXT NOT NULL,
    question_id    TEXT NOT NULL,
    answer         TEXT NOT NULL,
    timestamp      TEXT NOT NULL,
    PRIMARY KEY (study_id, participant_id, question_id)
);
CREATE TABLE IF NOT EXISTS participants (
    study_id       TEXT NOT NULL,
    participant_id TEXT NOT NULL,
    started_at     TEXT NOT NULL,
    PRIMARY KEY (study_id, participant_id)
);
"""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class ResponseStore:
    """Answers of one or more studies in a SQLite file (created on first use)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise IsADirectoryError(f"--db {self.path} is a folder; give a file name such as responses.sqlite")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as con:
            con.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30, isolation_level=None)  # autocommit
        con.execute("PRAGMA busy_timeout = 30000")
        return con

    # ---------------------------------------------------------------- writing
    def register(self, study_id: str, participant_id: str) -> None:
        """Remember when a participant started (no-op when they come back)."""
        con = self._connect()
        try:
            con.execute("INSERT OR IGNORE INTO participants VALUES (?, ?, ?)",
                        (study_id, participant_id, _now()))
        finally:
            con.close()

    def add_answer(self, study_id: str, participant_id: str, question_id: str, answer: str) -> bool:
        """Store an answer; returns False (and keeps the old one) when it was already answered."""
        con = self._connect()
        try:
            cur = con.execute("INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?)",
                              (study_id, participant_id, question_id, answer, _now()))
            return cur.rowcount == 1
        finally:
            con.close()

    # ---------------------------------------------------------------- reading
    def answered(self, study_id: str, participant_id: str) -> dict[str, str]:
        """``{question_id: answer}`` of one participant."""
        con = self._connect()
        try:
            rows = con.execute("SELECT question_id, answer FROM responses WHERE study_id = ? AND "
                               "participant_id = ?", (study_id, participant_id)).fetchall()
        finally:
            con.close()
        return dict(rows)

    def to_frame(self, study_id: str | None = None) -> pd.DataFrame:
        """All answers (optionally of one study) ordered by study, participant and time."""
        con = self._connect()
        try:
            sql = f"SELECT {', '.join(EXPORT_COLUMNS)} FROM responses"
            args: tuple = ()
            if study_id is not None:
                sql += " WHERE study_id = ?"
                args = (study_id,)
            sql += " ORDER BY study_id, participant_id, timestamp, question_id"
            rows = con.execute(sql, args).fetchall()
        finally:
            con.close()
        return pd.DataFrame(rows, columns=EXPORT_COLUMNS)

    def export_csv(self, out: str | os.PathLike, study_id: str | None = None) -> Path:
        """Write the answers as CSV (atomically) in the format :func:`score_table` reads."""
        return io.write_csv(out, self.to_frame(study_id))


def export_answers(db: str | os.PathLike, out: str | os.PathLike, study_id: str | None = None) -> Path:
    """Export the answers of ``db`` to ``out`` (CSV); ``db`` must exist."""
    db = Path(db)
    if not db.is_file():
        raise FileNotFoundError(f"response database {db} does not exist (the `serve` command creates it)")
    return ResponseStore(db).export_csv(out, study_id)
