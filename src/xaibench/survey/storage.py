"""SQLite storage of survey answers.

One row per (study, participant, question) holding the participant's *latest* answer and when it
was given (ISO-8601 UTC): a participant who goes back and changes an answer changes what is
scored (``changes`` counts how often).  Every call opens its own short-lived connection, so the
store can be shared by the threads of the web server.

Beside the database lives ``<db>.secret``, a random key generated once (mode 0600) that signs
the participants' completion codes, so nobody without the server's files can forge one.

Each participant gets a random token when they start (:meth:`ResponseStore.register`): the browser keeps
it in a cookie and the participant sees it as their resume code.  Only its SHA-256 is stored, and
only a request that brings it may act as that participant (:meth:`ResponseStore.check_token`), so knowing
a participant id is not enough to change that participant's answers.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
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
    changes        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (study_id, participant_id, question_id)
);
CREATE TABLE IF NOT EXISTS participants (
    study_id       TEXT NOT NULL,
    participant_id TEXT NOT NULL,
    started_at     TEXT NOT NULL,
    token_sha256   TEXT,
    PRIMARY KEY (study_id, participant_id)
);
"""


def new_token() -> str:
    """A participant token: 80 random bits as 16 letters and digits in groups of four (``ABCD-EFGH-...``)."""
    import base64

    raw = base64.b32encode(secrets.token_bytes(10)).decode()
    return "-".join(raw[i:i + 4] for i in range(0, 16, 4))


def _token_digest(token: str) -> str:
    norm = "".join(token.split()).replace("-", "").upper()
    return hashlib.sha256(norm.encode()).hexdigest()


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
            # write-ahead log: readers never wait for a writer, so a crowd of participants does not queue
            con.execute("PRAGMA journal_mode = WAL")
            con.executescript(_SCHEMA)
            if "changes" not in {r[1] for r in con.execute("PRAGMA table_info(responses)")}:  # older files
                con.execute("ALTER TABLE responses ADD COLUMN changes INTEGER NOT NULL DEFAULT 0")
            if "token_sha256" not in {r[1] for r in con.execute("PRAGMA table_info(participants)")}:
                con.execute("ALTER TABLE participants ADD COLUMN token_sha256 TEXT")

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30, isolation_level=None)  # autocommit
        con.execute("PRAGMA busy_timeout = 30000")
        return con

    # ---------------------------------------------------------------- writing
    def register(self, study_id: str, participant_id: str) -> str | None:
        """Start a participant: remember when, and return their new token (:func:`new_token`).  ``None`` when
        the participant has started before (their token is theirs alone: :meth:`check_token`).  A participant
        stored without a token (by an older server) gets one here, once."""
        token = new_token()
        con = self._connect()
        try:
            cur = con.execute("INSERT OR IGNORE INTO participants VALUES (?, ?, ?, ?)",
                              (study_id, participant_id, _now(), _token_digest(token)))
            if cur.rowcount != 1:
                cur = con.execute("UPDATE participants SET token_sha256 = ? WHERE study_id = ? AND "
                                  "participant_id = ? AND token_sha256 IS NULL",
                                  (_token_digest(token), study_id, participant_id))
            return token if cur.rowcount == 1 else None
        finally:
            con.close()

    def check_token(self, study_id: str, participant_id: str, token: str | None) -> bool:
        """Whether ``token`` is the token of this started participant (spaces, dashes and case ignored)."""
        if not token:
            return False
        con = self._connect()
        try:
            row = con.execute("SELECT token_sha256 FROM participants WHERE study_id = ? AND participant_id = ?",
                              (study_id, participant_id)).fetchone()
        finally:
            con.close()
        return bool(row and row[0]) and hmac.compare_digest(row[0], _token_digest(token))

    def add_answer(self, study_id: str, participant_id: str, question_id: str, answer: str) -> bool:
        """Store an answer; a changed answer replaces the earlier one (the latest answer counts).
        Returns False when nothing changed (the same answer submitted again)."""
        con = self._connect()
        try:
            cur = con.execute(
                "INSERT INTO responses (study_id, participant_id, question_id, answer, timestamp) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (study_id, participant_id, question_id) DO UPDATE SET "
                "answer = excluded.answer, timestamp = excluded.timestamp, changes = changes + 1 "
                "WHERE answer != excluded.answer",
                (study_id, participant_id, question_id, answer, _now()))
            return cur.rowcount == 1
        finally:
            con.close()

    # ---------------------------------------------------------------- completion codes
    @property
    def secret_path(self) -> Path:
        return self.path.with_name(self.path.name + ".secret")

    def secret(self) -> str:
        """The server secret that signs completion codes (created on first use, never changed).

        The key is written to a temporary file that is then hard-linked to its final name, which
        fails if another request created it first: concurrent first requests all read one complete
        key, never a half-written file.
        """
        p = self.secret_path
        if not p.exists():
            tmp = p.with_name(f"{p.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write(secrets.token_hex(32) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
                try:
                    os.link(tmp, p)
                except FileExistsError:
                    pass  # another request won the race: its key counts
            finally:
                tmp.unlink(missing_ok=True)
        key = p.read_text().strip()
        if len(key) < 32:
            raise RuntimeError(f"{p} is damaged (too short); restore it from a backup -- completion "
                               "codes already handed out are signed with it")
        return key

    def is_registered(self, study_id: str, participant_id: str) -> bool:
        """Did this participant start this study (enter their id on the start page)?"""
        con = self._connect()
        try:
            return con.execute("SELECT 1 FROM participants WHERE study_id = ? AND participant_id = ?",
                               (study_id, participant_id)).fetchone() is not None
        finally:
            con.close()

    def studies(self) -> list[str]:
        """The study ids that have answers in this database."""
        con = self._connect()
        try:
            return [r[0] for r in con.execute("SELECT DISTINCT study_id FROM responses ORDER BY study_id")]
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
        """Write one study's answers as CSV (atomically) in the format :func:`score_table` reads.
        ``study_id`` may be left out only when the database holds a single study."""
        studies = self.studies()
        if study_id is None and len(studies) > 1:
            raise ValueError(f"{self.path} holds answers of {len(studies)} studies ({', '.join(studies)}); "
                             "export one at a time with --study STUDY_ID")
        if study_id is not None and studies and study_id not in studies:
            raise ValueError(f"{self.path} has no answers for study {study_id!r}; it has {', '.join(studies)}")
        return io.write_csv(out, self.to_frame(study_id))


def export_answers(db: str | os.PathLike, out: str | os.PathLike, study_id: str | None = None) -> Path:
    """Export one study's answers of ``db`` to ``out`` (CSV); ``db`` must exist."""
    db = Path(db)
    if not db.is_file():
        raise FileNotFoundError(f"response database {db} does not exist (the `serve` command creates it)")
    return ResponseStore(db).export_csv(out, study_id)
