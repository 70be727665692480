"""End-to-end: a participant answers a 4-question survey in a real (headless) chromium.

Needs Debian's chromium at /usr/bin/chromium (``make browser-deps`` / ``.ci/install-browser``) and
the ``playwright`` Python package; ``playwright install`` is never used.  Skipped when chromium is
missing, except on CI (``CI=true``), where a missing browser is a failure.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from xaibench.evaluation import human_grounded as hg
from xaibench.survey import serve_in_thread
from xaibench.survey.__main__ import main as cli

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
# The test suite must not reach (or even look up) any outside host.  Without the resolver rule
# chromium still resolved accounts.google.com and content-autofill.googleapis.com (strace showed
# DNS queries), whatever the other flags say; the rule makes every name but 127.0.0.1 fail
# locally, and the rest switch off the background services that would try.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
                 "--disable-client-side-phishing-detection", "--disable-breakpad", "--no-pings",
                 "--no-default-browser-check", "--metrics-recording-only", "--dns-prefetch-disable",
                 "--disable-features=AutofillServerCommunication,OptimizationHints,Translate,MediaRouter,"
                 "DialMediaRouteProvider,NetworkTimeServiceQuerying,CertificateTransparencyComponentUpdater",
                 "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"]
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


def _launch(p, executable: Path = CHROMIUM):
    return p.chromium.launch(executable_path=str(executable), headless=True, args=CHROMIUM_ARGS)


def _answer_current(page) -> str:
    qid = page.locator("input[name=question_id]").get_attribute("value")
    page.locator(f"input[name=answer][value='{PLAN[qid][0]}']").check()
    page.locator("#next").click()
    page.wait_for_load_state()
    return qid


@contextlib.contextmanager
def _survey_in_browser(tmp_path: Path, executable: Path = CHROMIUM):
    """A survey server on a free port and a launched browser: yields ``(study, db, base, browser)``."""
    from playwright.sync_api import sync_playwright

    study = hg.study_from_json(STUDY)
    db = tmp_path / "responses.sqlite"
    server, thread = serve_in_thread(study, db, host="127.0.0.1", port=0)
    try:
        with sync_playwright() as p:
            browser = _launch(p, executable)
            try:
                yield study, db, f"http://127.0.0.1:{server.server_port}", browser
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _start(page, base: str, participant: str, resume_code: str | None = None) -> None:
    page.goto(base + "/")
    page.fill("#participant_id", participant)
    if resume_code is not None:
        page.fill("#resume_code", resume_code)
    page.click("#start")
    page.wait_for_url(base + "/q")


def test_participant_answers_reloads_resumes_and_export_matches(tmp_path):
    _require_browser()
    seen: list[str] = []
    with _survey_in_browser(tmp_path) as (study, db, base, browser):
        page = browser.new_page()
        _start(page, base, "worker-7")
        assert page.locator("#progress").inner_text() == "Question 1 out of 4"
        seen.append(_answer_current(page))
        seen.append(_answer_current(page))

        # reload mid-way: the page shows the 3rd question, nothing is answered twice
        page.reload()
        assert page.locator("#progress").inner_text() == "Question 3 out of 4"
        third = page.locator("input[name=question_id]").get_attribute("value")
        assert third not in seen

        # a fresh browser context (no cookie) with the same id and the resume code resumes there as well
        other = browser.new_context().new_page()
        _start(other, base, "worker-7", page.locator("#resume-code").inner_text())
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


# ----------------------------------------------------------------------------------------------
# no outbound network: the browser runs under strace and every socket call is checked
# ----------------------------------------------------------------------------------------------
_LOOPBACK = re.compile(r'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"|"::ffff:127\.')
_SOCK_TAG = re.compile(r"^\d+\s+(\w+)\(\d+<(TCP|UDP|TCPv6|UDPv6):\[(.*?)\]>")
_ADDR = re.compile(r"sa_family=AF_INET6?")


def outbound_attempts(strace_log: str) -> list[str]:
    """Socket calls in an ``strace -f -yy`` log that reach for a non-loopback host.

    Flagged: a TCP connect to a non-loopback address, anything addressed to port 53 (DNS), and
    data sent (``sendto``/``sendmsg``/``sendmmsg``/``write``) on a socket whose peer is not
    loopback.  Not flagged: a UDP ``connect`` that is never followed by data -- chromium's IPv6
    reachability probe (``connect`` to 2001:4860:4860::8888, which only asks the kernel for a
    route and sends no packet; chromium has no switch to turn it off).
    """
    bad = []
    for line in strace_log.splitlines():
        m = _SOCK_TAG.match(line)
        if not m:
            continue
        call, proto, ends = m.groups()
        if "htons(53)" in line:
            bad.append(line)
        elif call == "connect" and _ADDR.search(line) and not _LOOPBACK.search(line):
            if proto.startswith("TCP"):
                bad.append(line)
        elif call in ("sendto", "sendmsg", "sendmmsg", "write") and "->" in ends:
            peer = ends.split("->", 1)[1]
            if not (peer.startswith("127.") or peer.startswith("[::1]") or peer.startswith("::1")
                    or peer.startswith("[::ffff:127.")):
                bad.append(line)
        elif call in ("sendto", "sendmsg") and _ADDR.search(line) and not _LOOPBACK.search(line):
            bad.append(line)  # an unconnected datagram addressed to an outside host
    return bad


def test_outbound_attempts_parser_flags_dns_and_outside_tcp():
    log = "\n".join([
        '7 connect(29<UDP:[47221]>, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")}, 16) = 0',
        '7 connect(30<TCP:[4722]>, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("142.250.1.1")}, 16) = -1',
        '7 sendto(31<UDPv6:[[fd00::2]:5000->[2001:4860:4860::8888]:443]>, "x", 1, 0, NULL, 0) = 1',
        '8 connect(27<UDPv6:[47190]>, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), '
        'inet_pton(AF_INET6, "2001:4860:4860::8888", &sin6_addr), sin6_scope_id=0}, 28) = 0',
        '8 connect(29<TCP:[47224]>, {sa_family=AF_INET, sin_port=htons(18777), sin_addr=inet_addr("127.0.0.1")}, 16) = -1',
        '8 sendto(29<TCP:[127.0.0.1:58600->127.0.0.1:18777]>, "GET / HTTP/1.1", 14, MSG_NOSIGNAL, NULL, 0) = 14',
        '8 connect(12<UNIX:[123]>, {sa_family=AF_UNIX, sun_path="/run/x"}, 110) = 0',
    ])
    flagged = outbound_attempts(log)
    assert [f.split()[0] + " " + f.split("(")[1][:2] for f in flagged] == ["7 29", "7 30", "7 31"]


def _strace_usable() -> str | None:
    if shutil.which("strace") is None:
        return "strace is not installed (apt-get install strace)"
    r = subprocess.run(["strace", "-f", "-o", os.devnull, "true"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"strace cannot trace here ({r.stderr.strip()[:200]})"
    return None


def test_browser_makes_no_outbound_network_attempts(tmp_path):
    """The headless browser of the survey test used to resolve accounts.google.com and
    content-autofill.googleapis.com; with CHROMIUM_ARGS it must not reach for any outside host."""
    _require_browser()
    why = _strace_usable()
    if why:
        pytest.skip(why)

    log = tmp_path / "strace.log"
    wrapper = tmp_path / "chromium-under-strace"
    wrapper.write_text("#!/bin/sh\n"
                       f"exec strace -f -yy -qq -e trace=connect,sendto,sendmsg,sendmmsg,write -o {log} "
                       f"{CHROMIUM} \"$@\"\n")
    wrapper.chmod(0o755)
    with _survey_in_browser(tmp_path, wrapper) as (_, _, base, browser):
        page = browser.new_page()
        _start(page, base, "worker-8")
        _answer_current(page)
        page.wait_for_timeout(3000)  # give background services time to try
    text = log.read_text()
    assert base.removeprefix("http://") in text  # the trace did see the browser's own traffic
    assert outbound_attempts(text) == []
