"""The survey web app over real HTTP (no browser): flow, resume, escaping, storage, export, CLI."""
from __future__ import annotations

import http.cookiejar
import sqlite3
import urllib.error
import urllib.parse
import urllib.request

import pandas as pd
import pytest

from xaibench import paths
from xaibench.evaluation import human_grounded as hg
from xaibench.survey import ResponseStore, completion_code, export_answers, serve_in_thread
from xaibench.survey.__main__ import main as cli

XSS = '<script>window.__xss = 1</script> & "quotes"'
STUDY = {
    "study_id": "web-test",
    "seed": 3,
    "questions": [
        {"question_id": "q1", "task": 1, "dataset": "amazon", "method": "lime", "model_correct": True,
         "predicted_class": "Negative", "evidence_a": ["waste of money"], "evidence_b": [XSS], "key": "A"},
        {"question_id": "q2", "task": 2, "dataset": "amazon", "method": "lime", "model_correct": False,
         "class_names": ["Negative", "Positive"], "evidence": ["enjoyed it", "great"], "key": "Positive"},
        {"question_id": "q3", "task": 3, "dataset": "arxiv", "method": "dt", "model_correct": True,
         "class_names": ["Computer Science", "Mathematics", "Physics"], "predicted_class": "Physics",
         "predicted_probability": 0.55, "evidence": ["quantum"], "counter_evidence": ["we prove"],
         "key": "Physics"},
    ],
}


@pytest.fixture()
def server(tmp_path):
    study = hg.study_from_json(STUDY)
    db = tmp_path / "responses.sqlite"
    srv, thread = serve_in_thread(study, db)
    base = f"http://127.0.0.1:{srv.server_port}"
    yield study, db, base
    srv.shutdown()
    srv.server_close()
    thread.join(5)


class Client:
    """A browser-like client: keeps cookies, follows redirects, never raises on 4xx."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def request(self, path: str, form: dict | None = None):
        data = urllib.parse.urlencode(form).encode() if form is not None else None
        try:
            with self.opener.open(self.base + path, data=data, timeout=30) as r:
                return r.status, r.geturl(), r.read().decode(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.geturl(), e.read().decode(), dict(e.headers)

    def current_qid(self) -> str:
        status, url, body, _ = self.request("/q")
        assert status == 200 and url.endswith("/q"), (status, url)
        marker = 'name="question_id" value="'
        return body.split(marker, 1)[1].split('"', 1)[0]


def _resume_code(page: str) -> str:
    return page.split('id="resume-code">', 1)[1].split("<", 1)[0]


def test_full_flow_resume_and_export(server, tmp_path):
    study, db, base = server
    c = Client(base)
    status, url, body, _ = c.request("/")
    assert status == 200 and 'name="participant_id"' in body and "3 questions" in body

    status, url, body, _ = c.request("/start", {"participant_id": "alice"})
    assert status == 200 and url.endswith("/q") and "Question 1 out of 3" in body
    order = study.order_for("alice")
    assert c.current_qid() == order[0]

    plan = {"q1": "unconfident:A", "q2": "confident:Negative", "q3": "unconfident:Mathematics"}
    expected = {"q1": 0.5, "q2": -1.0, "q3": -0.5}
    status, url, body, _ = c.request("/answer", {"question_id": order[0], "answer": plan[order[0]]})
    assert status == 200 and "Question 2 out of 3" in body

    # a new browser (no cookie) entering the same id with the resume code resumes at question 2
    c2 = Client(base)
    status, url, body, _ = c2.request("/start", {"participant_id": "alice", "resume_code": _resume_code(body)})
    assert "Question 2 out of 3" in body and c2.current_qid() == order[1]
    # going back and changing the first answer: the latest answer counts
    first = study.question(order[0])
    changed = next(code for code, _ in hg.answer_options(first) if code != plan[order[0]])
    status, _, body, _ = c2.request("/answer", {"question_id": order[0], "answer": changed})
    assert status == 200 and "Question 2 out of 3" in body
    plan[order[0]] = changed
    expected[order[0]] = hg.score_answer(first, changed)
    for qid in order[1:]:
        assert c2.current_qid() == qid
        status, url, body, _ = c2.request("/answer", {"question_id": qid, "answer": plan[qid]})
    assert status == 200 and url.endswith("/done") and "Thank you" in body
    assert completion_code("web-test", "alice", ResponseStore(db).secret()) in body
    assert c.request("/q")[1].endswith("/done")  # the first browser is done too

    out = export_answers(db, tmp_path / "answers.csv")
    df = pd.read_csv(out, dtype=str)
    assert list(df.columns) == ["study_id", "participant_id", "question_id", "answer", "timestamp"]
    assert dict(zip(df["question_id"], df["answer"])) == plan
    scored = hg.score_answers(study, df)
    assert dict(zip(scored["question_id"], scored["score"])) == expected
    table = hg.score_table(study, df)
    assert set(table["subset"]) == {"all", "correct", "incorrect"}
    assert table.loc[table["task"] == "task_2", "ours"].tolist() == [-1.0, -1.0]  # all + incorrect


def test_bad_input_is_rejected_with_a_message(server):
    study, db, base = server
    c = Client(base)
    status, _, body, _ = c.request("/start", {"participant_id": "bad id<>"})
    assert status == 400 and "Please enter a participant ID" in body
    assert c.request("/q")[1].endswith("/")  # no participant yet -> start page
    c.request("/start", {"participant_id": "bob"})
    qid = c.current_qid()
    status, _, body, _ = c.request("/answer", {"question_id": qid})
    assert status == 400 and "Please choose one of the answers" in body
    status, _, body, _ = c.request("/answer", {"question_id": qid, "answer": "confident:Nonsense"})
    assert status == 400
    status, _, body, _ = c.request("/answer", {"question_id": "nope", "answer": "none"})
    assert status == 400 and "Unknown question" in body
    assert ResponseStore(db).answered("web-test", "bob") == {}
    assert c.request("/q")[2].count("Question 1 out of 3") == 1
    assert c.request("/no-such-page")[0] == 404
    assert c.request("/static/../app.py")[0] == 404
    assert c.request("/static/style.css")[0] == 200


def test_study_text_is_html_escaped(server):
    study, db, base = server
    c = Client(base)
    c.request("/start", {"participant_id": "carol"})
    for _ in range(3):
        qid = c.current_qid()
        status, _, body, headers = c.request("/q")
        if qid == "q1":
            break
        c.request("/answer", {"question_id": qid, "answer": hg.answer_options(study.question(qid))[0][0]})
    assert "<script>" not in body
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt; &amp; &quot;quotes&quot;" in body
    assert "script-src 'none'" in headers["Content-Security-Policy"]
    assert headers["Cache-Control"] == "no-store"


def test_render_question_escapes_every_field():
    evil = "<b>x</b>"
    q = hg.study_from_json({"study_id": "s", "seed": 1, "questions": [{
        "question_id": "q", "task": 3, "dataset": evil, "method": "m", "model_correct": True,
        "class_names": [evil, "ok"], "predicted_class": evil, "predicted_probability": 0.5,
        "evidence": [evil], "counter_evidence": [evil], "key": "ok"}]}).questions[0]
    from xaibench.survey import render_question

    html = render_question(q, ("<i>A</i>", "B"))
    assert "<b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert 'value="confident:&lt;b&gt;x&lt;/b&gt;"' in html


def test_store_records_the_latest_answer(tmp_path):
    """A changed answer used to be discarded silently; now the latest one counts."""
    store = ResponseStore(tmp_path / "r.sqlite")
    assert store.add_answer("s", "p", "q", "none") is True
    assert store.add_answer("s", "p", "q", "none") is False  # double click: nothing changes
    assert store.add_answer("s", "p", "q", "confident:A") is True
    assert store.answered("s", "p") == {"q": "confident:A"}
    with sqlite3.connect(tmp_path / "r.sqlite") as con:
        assert con.execute("SELECT COUNT(*), MAX(changes) FROM responses").fetchone() == (1, 1)
    assert store.to_frame("other").empty


def test_cli(tmp_path, capsys):
    demo = paths.resources_dir() / "survey_demo_study.json"
    assert cli(["validate", "--study", str(demo)]) == 0
    assert "6 questions" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text('{"study_id": "x", "seed": 1, "questions": [{"question_id": "q"}]}')
    assert cli(["validate", "--study", str(bad)]) == 2
    assert "missing required field" in capsys.readouterr().err
    assert cli(["export", "--db", str(tmp_path / "missing.sqlite"), "--out", str(tmp_path / "a.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err

    study = hg.load_study(demo)
    store = ResponseStore(tmp_path / "r.sqlite")
    for pid in ("p1", "p2"):
        for q in study.questions:
            store.add_answer(study.study_id, pid, q.question_id, hg.answer_options(q)[0][0])
    assert cli(["export", "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "a.csv")]) == 0
    assert "wrote 12 answers" in capsys.readouterr().out
    assert cli(["score", "--study", str(demo), "--answers", str(tmp_path / "a.csv"),
                "--out", str(tmp_path / "scores.csv")]) == 0
    out = capsys.readouterr().out
    assert "Fleiss' kappa" in out
    scores = pd.read_csv(tmp_path / "scores.csv")
    assert {"task", "dataset", "method", "subset", "ours", "paper"} <= set(scores.columns)


# ----------------------------------------------------------------------------------------------
# forged codes, answers from strangers, several studies, kappa of one item
# ----------------------------------------------------------------------------------------------
def test_completion_code_needs_the_server_secret(tmp_path):
    import hashlib
    import stat

    a, b = ResponseStore(tmp_path / "a.sqlite"), ResponseStore(tmp_path / "b.sqlite")
    key = a.secret()
    assert len(key) == 64 and ResponseStore(tmp_path / "a.sqlite").secret() == key  # generated once
    assert stat.S_IMODE(a.secret_path.stat().st_mode) == 0o600
    assert b.secret() != key
    code = completion_code("web-test", "alice", key)
    forged = hashlib.sha256("web-test\0alice".encode()).hexdigest()[:10].upper()  # the old, public rule
    assert not code.startswith(forged) and code != completion_code("web-test", "alice", b.secret())
    assert code != completion_code("web-test", "bob", key)


def test_answers_only_from_started_participants_for_their_current_question(server):
    study, db, base = server
    stranger = Client(base)  # never started: a hand-made cookie
    stranger.jar.set_cookie(http.cookiejar.Cookie(
        0, "xaibench_pid", "mallory", None, False, "127.0.0.1", False, False, "/", True, False, None, True,
        None, None, {}))
    status, _, body, _ = stranger.request("/answer", {"question_id": "q1", "answer": "none"})
    assert status == 403 and "has not started" in body
    assert stranger.request("/q")[1].endswith("/")
    c = Client(base)
    c.request("/start", {"participant_id": "dave"})
    order = study.order_for("dave")
    later = study.question(order[2])
    status, _, body, _ = c.request("/answer", {"question_id": later.question_id,
                                               "answer": hg.answer_options(later)[0][0]})
    assert status == 409 and "not your current question" in body
    store = ResponseStore(db)
    assert store.answered("web-test", "mallory") == {} and store.answered("web-test", "dave") == {}


def test_export_and_score_one_study_of_several(tmp_path, capsys):
    demo = paths.resources_dir() / "survey_demo_study.json"
    study = hg.load_study(demo)
    other = hg.study_from_json(STUDY)
    db = tmp_path / "r.sqlite"
    store = ResponseStore(db)
    for s in (study, other):
        for pid in ("p1", "p2"):
            for q in s.questions:
                store.add_answer(s.study_id, pid, q.question_id, hg.answer_options(q)[0][0])
    out = tmp_path / "a.csv"
    assert cli(["export", "--db", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "2 studies" in err and "--study" in err and not out.exists()
    assert cli(["export", "--db", str(db), "--out", str(out), "--study", str(demo)]) == 0
    assert set(pd.read_csv(out)["study_id"]) == {study.study_id}
    assert cli(["export", "--db", str(db), "--out", str(out), "--study", "nope"]) == 2
    assert "no answers for study 'nope'" in capsys.readouterr().err
    assert cli(["score", "--study", str(demo), "--answers", str(out)]) == 0
    both = tmp_path / "both.csv"
    store.to_frame().to_csv(both, index=False)  # an export mixing studies still scores one study
    assert cli(["score", "--study", str(demo), "--answers", str(both)]) == 0
    capsys.readouterr()
    assert cli(["codes", "--study", str(demo), "--db", str(db)]) == 0
    lines = capsys.readouterr().out.split()
    assert lines == ["p1", completion_code(study.study_id, "p1", store.secret()),
                     "p2", completion_code(study.study_id, "p2", store.secret())]


def test_fleiss_kappa_of_one_item_is_undefined():
    import math

    assert math.isnan(hg.fleiss_kappa([[1, 1]]))  # used to print -1.0
    assert math.isnan(hg.fleiss_kappa([[2, 1, 0]]))
    assert hg.fleiss_kappa([[2, 0], [0, 2]]) == 1.0


def test_knowing_a_participant_id_without_the_token_changes_nothing(server):
    """The cookie was the participant id: any client that knew an id could change that participant's answers."""
    study, db, base = server
    alice = Client(base)
    status, _, body, _ = alice.request("/start", {"participant_id": "erin"})
    order = study.order_for("erin")
    first = study.question(order[0])
    mine = hg.answer_options(first)[0][0]
    status, _, body, _ = alice.request("/answer", {"question_id": order[0], "answer": mine})
    assert status == 200 and "Question 2 out of 3" in body
    code = _resume_code(body)
    assert len(code.replace("-", "")) == 16 and code not in ("erin", "")
    other = next(c for c, _ in hg.answer_options(first) if c != mine)

    # 1. a hand-made cookie holding the id, with no token or a guessed one
    for token in (None, "erin", "AAAA-AAAA-AAAA-AAAA"):
        mallory = Client(base)
        for name, value in (("xaibench_pid", "erin"), ("xaibench_token", token)):
            if value is not None:
                mallory.jar.set_cookie(http.cookiejar.Cookie(
                    0, name, value, None, False, "127.0.0.1", False, False, "/", True, False, None, True,
                    None, None, {}))
        status, _, body, _ = mallory.request("/answer", {"question_id": order[0], "answer": other})
        assert status == 403 and "has not started the survey as this participant" in body
        assert not mallory.request("/q")[1].endswith("/q")  # no question page either
        assert mallory.request("/done")[1].endswith("/")
    # 2. the start page with the id alone, or a wrong code
    for form in ({"participant_id": "erin"}, {"participant_id": "erin", "resume_code": "ABCD-EFGH-IJKL-MNOP"}):
        mallory = Client(base)
        status, url, body, _ = mallory.request("/start", form)
        assert status == 403 and "has already started this survey" in body and "resume code" in body
        assert not mallory.request("/q")[1].endswith("/q")
        status, _, body, _ = mallory.request("/answer", {"question_id": order[0], "answer": other})
        assert status != 200 or "Question" not in body
    assert ResponseStore(db).answered("web-test", "erin") == {order[0]: mine}  # nothing changed
    # the participant, and the code typed in lower case with spaces, still work
    again = Client(base)
    status, _, body, _ = again.request("/start", {"participant_id": "erin",
                                                  "resume_code": code.lower().replace("-", " ")})
    assert status == 200 and "Question 2 out of 3" in body
    assert alice.request("/q")[0] == 200


def test_tokens_are_random_stored_as_digests_and_survive_a_restart(tmp_path):
    db = tmp_path / "r.sqlite"
    store = ResponseStore(db)
    tokens = {store.register("s", f"p{i}") for i in range(50)}
    assert len(tokens) == 50 and None not in tokens
    assert store.register("s", "p0") is None  # started before: no new token
    assert not any(t.encode() in db.read_bytes() for t in tokens)  # only digests are stored
    t = store.register("s", "z")
    assert ResponseStore(db).check_token("s", "z", t) and not ResponseStore(db).check_token("s", "z", "x")
    assert not store.check_token("s", "z", None) and not store.check_token("other", "z", t)
