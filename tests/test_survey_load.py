"""The survey server under a crowd: many participants at once, racing first requests, stalled clients.

Every request goes to the loopback address; loops are bounded in count and time.
"""
from __future__ import annotations

import socket
import sqlite3
import threading
import time

import pytest

from xaibench.evaluation import human_grounded as hg
from xaibench.evaluation.human_grounded.answers import answer_options
from xaibench.survey import ResponseStore, serve_in_thread

from tests.test_survey import STUDY, Client

N_PARTICIPANTS = 200


@pytest.fixture()
def crowd_server(tmp_path):
    study = hg.study_from_json(STUDY)
    db = tmp_path / "responses.sqlite"
    srv, thread = serve_in_thread(study, db, request_timeout=1.0)
    yield study, db, f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def test_200_participants_starting_at_once_lose_and_duplicate_nothing(crowd_server):
    study, db, base = crowd_server
    first = {q.question_id: answer_options(q)[0][0] for q in study.questions}
    barrier = threading.Barrier(N_PARTICIPANTS, timeout=30)
    errors: list[str] = []

    def participant(i: int) -> None:
        c = Client(base)
        try:
            barrier.wait()  # every participant connects at the same moment
            status, url, _, _ = c.request("/start", {"participant_id": f"p{i:03d}"})
            assert status == 200 and url.endswith("/q"), (status, url)
            for _ in study.questions:
                qid = c.current_qid()
                status, url, _, _ = c.request("/answer", {"question_id": qid, "answer": first[qid]})
                assert status == 200, (status, url)
            status, url, body, _ = c.request("/q")
            assert url.endswith("/done") and "completion code" in body.lower(), (status, url)
        except Exception as exc:  # noqa: BLE001 - every failure is collected and reported
            errors.append(f"p{i:03d}: {exc!r}")

    t0 = time.monotonic()
    threads = [threading.Thread(target=participant, args=(i,)) for i in range(N_PARTICIPANTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "participants still running after 60 s"
    assert not errors, f"{len(errors)} of {N_PARTICIPANTS} participants failed, e.g. {errors[:3]}"
    con = sqlite3.connect(db)
    rows = con.execute("SELECT participant_id, question_id, COUNT(*) FROM responses "
                       "GROUP BY participant_id, question_id").fetchall()
    con.close()
    want = N_PARTICIPANTS * len(study.questions)
    assert len(rows) == want, f"{want - len(rows)} answers lost"
    assert all(n == 1 for *_, n in rows), "duplicated answers"
    assert time.monotonic() - t0 < 60


def test_concurrent_first_requests_create_one_complete_secret(tmp_path):
    for trial in range(10):
        store = ResponseStore(tmp_path / f"db{trial}.sqlite")
        barrier = threading.Barrier(16, timeout=10)
        keys, errors = [], []

        def first_request() -> None:
            try:
                barrier.wait()
                keys.append(store.secret())
            except Exception as exc:  # noqa: BLE001
                errors.append(repr(exc))

        threads = [threading.Thread(target=first_request) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert not errors, errors[:2]
        assert len(keys) == 16 and len(set(keys)) == 1 and len(keys[0]) == 64
        assert not list(tmp_path.glob("*.tmp")), "temporary key files left behind"


def test_a_body_shorter_than_its_content_length_does_not_hold_a_thread(crowd_server):
    _, _, base = crowd_server
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(b"POST /start HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                  b"Content-Length: 100\r\n\r\nparticipant_id=p1")  # 17 of 100 bytes, then silence
        t0 = time.monotonic()
        # the server answers other participants meanwhile
        assert Client(base).request("/healthz")[0] == 200
        reply = s.recv(4096)
        waited = time.monotonic() - t0
    assert waited < 5, f"the stalled request held its thread for {waited:.1f} s"
    assert reply.startswith(b"HTTP/1.") and b" 400 " in reply.split(b"\r\n", 1)[0], reply[:80]


def test_request_timeout_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="request_timeout"):
        serve_in_thread(hg.study_from_json(STUDY), tmp_path / "db.sqlite", request_timeout=0)
