"""End-to-end: a participant answers a 4-question survey in a real (headless) chromium.

Needs Debian's chromium at /usr/bin/chromium (``make browser-deps`` / ``.ci/install-browser``) and
the ``playwright`` Python package; ``playwright install`` is never used.  Skipped when chromium is
missing, except on CI (``CI=true``), where a missing browser is a failure.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from xaibench.evaluation import human_grounded as hg
from xaibench.survey import serve_in_thread
from xaibench.survey.__main__ import main as cli

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ON_CI = os.environ.get("CI", "").lower() == "true"


def _require_browser():
    if not CHROMIUM.exists():
        msg = f"{CHROMIUM} is missing; install it with `.ci/install-browser` (or `make browser-deps`)"
        if ON_CI:
            pytest.fail(msg + " -- CI=true, so the browser test must run")
        pytest.skip(msg)
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError as e:
        if ON_CI:
            pytest.fail(f"the playwright package is missing ({e}); pip install -e '.[test]'")
        pytest.skip(f"the playwright package is missing ({e}); pip install -e '.[test]'")


XSS = "<script>window.__xss = 1</script>"
STUDY = {
    "study_id": "browser-test",
    "seed": 11,
    "model_labels": ["Robot C", "Robot L"],
    "questions": [
        {"question_id": "t1", "task": 1, "dataset": "amazon", "method": "lrp_n", "model_correct": True,
         "predicted_class": "Negative", "evidence_a": ["waste of money"], "evidence_b": ["the", "and"],
         "key": "A"},
        {"question_id": "t2", "task": 2, "dataset": "amazon", "method": "lime", "model_correct": True,
         "class_names": ["Negative", "Positive"], "evidence": ["enjoyed reading this", "I enjoyed"],
         "key": "Positive"},
        {"question_id": "t2x", "task": 2, "dataset": "amazon", "method": "lime", "model_correct": False,
         "class_names": ["Negative", "Positive"], "evidence": [XSS, "boring <b>plot</b>"], "key": "Negative"},
        {"question_id": "t3", "task": 3, "dataset": "amazon", "method": "lrp_n", "model_correct": False,
         "class_names": ["Negative", "Positive"], "predicted_class": "Positive", "predicted_probability": 0.6,
         "evidence": ["Good Sound"], "counter_evidence": ["would not re -"], "key": "Negative"},
    ],
}
# what the participant clicks, and the score each click must get (worked out by hand)
PLAN = {"t1": ("confident:A", 1.0), "t2": ("unconfident:Negative", -0.5),
        "t2x": ("none", 0.0), "t3": ("unconfident:Negative", 0.5)}


def _launch(p):
    return p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)


def _answer_current(page) -> str:
    qid = page.locator("input[name=question_id]").get_attribute("value")
    page.locator(f"input[name=answer][value='{PLAN[qid][0]}']").check()
    page.locator("#next").click()
    page.wait_for_load_state()
    return qid


def test_participant_answers_reloads_resumes_and_export_matches(tmp_path):
    _require_browser()
    from playwright.sync_api import sync_playwright

    study = hg.study_from_json(STUDY)
    db = tmp_path / "responses.sqlite"
    server, thread = serve_in_thread(study, db, host="127.0.0.1", port=0)
    base = f"http://127.0.0.1:{server.server_port}"
    seen: list[str] = []
    try:
        with sync_playwright() as p:
            browser = _launch(p)
            try:
                page = browser.new_page()
                page.goto(base + "/")
                page.fill("#participant_id", "worker-7")
                page.click("#start")
                page.wait_for_url(base + "/q")
                assert page.locator("#progress").inner_text() == "Question 1 out of 4"
                seen.append(_answer_current(page))
                seen.append(_answer_current(page))

                # reload mid-way: the page shows the 3rd question, nothing is answered twice
                page.reload()
                assert page.locator("#progress").inner_text() == "Question 3 out of 4"
                third = page.locator("input[name=question_id]").get_attribute("value")
                assert third not in seen

                # a fresh browser context (no cookie) with the same id resumes there as well
                other = browser.new_context().new_page()
                other.goto(base + "/")
                other.fill("#participant_id", "worker-7")
                other.click("#start")
                other.wait_for_url(base + "/q")
                assert other.locator("#progress").inner_text() == "Question 3 out of 4"
                assert other.locator("input[name=question_id]").get_attribute("value") == third

                while page.url.endswith("/q"):
                    qid = page.locator("input[name=question_id]").get_attribute("value")
                    if qid == "t2x":
                        # the injected markup is shown as text and never runs
                        items = page.locator("#evidence li").all_inner_texts()
                        assert items == [XSS, "boring <b>plot</b>"]
                        assert page.locator("#evidence b").count() == 0
                        assert page.evaluate("typeof window.__xss") == "undefined"
                    seen.append(_answer_current(page))
                assert page.url == base + "/done"
                assert "Thank you" in page.locator("#thanks").inner_text()
                assert page.evaluate("typeof window.__xss") == "undefined"
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

    assert sorted(seen) == sorted(PLAN) and seen == study.order_for("worker-7")

    out = tmp_path / "answers.csv"
    assert cli(["export", "--db", str(db), "--out", str(out)]) == 0
    answers = pd.read_csv(out, dtype=str)
    assert len(answers) == 4 and set(answers["participant_id"]) == {"worker-7"}
    assert dict(zip(answers["question_id"], answers["answer"])) == {k: v[0] for k, v in PLAN.items()}
    scored = hg.score_answers(study, answers)
    assert dict(zip(scored["question_id"], scored["score"])) == {k: v[1] for k, v in PLAN.items()}

    table = hg.score_table(study, answers).set_index(["task", "method", "subset"])
    assert table.loc[("task_1", "lrp_n", "all"), "ours"] == 1.0
    assert table.loc[("task_2", "lime", "all"), "ours"] == pytest.approx((-0.5 + 0.0) / 2)
    assert table.loc[("task_2", "lime", "correct"), "ours"] == -0.5
    assert table.loc[("task_2", "lime", "incorrect"), "ours"] == 0.0
    assert table.loc[("task_3", "lrp_n", "incorrect"), "ours"] == 0.5
