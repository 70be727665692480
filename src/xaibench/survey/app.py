"""The survey web app (standard library only: ``wsgiref`` + ``sqlite3``).

Flow: ``/`` asks for a participant id -> ``/q`` shows the participant's next unanswered question
(one at a time, answer scale as radio buttons, like the paper's screenshots) -> ``POST /answer``
stores it and redirects back to ``/q`` -> ``/done`` thanks the participant and shows a completion
code.  Starting gives the participant a random token (:meth:`ResponseStore.register`), kept in a
cookie beside the participant id and shown on every question page as the *resume code*: a request acts
as a participant only with that token, so knowing someone's id does not let anyone read or change
their answers.  Entering the same id with the resume code (other browser, next day) resumes where
that participant stopped, because the question order is a deterministic function of the study seed
and the participant id and answered questions are looked up in SQLite.

Every piece of study text is HTML-escaped, and pages are served with a Content-Security-Policy
that forbids scripts (the app needs none).
"""
from __future__ import annotations

import hashlib
import hmac
import html
import os
import re
import sys
import threading
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from socketserver import ThreadingMixIn
from typing import Callable, Iterable
from urllib.parse import parse_qs, quote
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from ..evaluation.human_grounded.answers import answer_options, parse_answer
from ..evaluation.human_grounded.study import Question, Study, StudyError
from .storage import ResponseStore

COOKIE = "xaibench_pid"
TOKEN_COOKIE = "xaibench_token"
PARTICIPANT_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"style.css": "text/css; charset=utf-8"}
MAX_BODY = 16 * 1024
#: seconds a connection may stay silent (e.g. a body shorter than its Content-Length) before it is dropped
REQUEST_TIMEOUT = 10.0
#: connections the listening socket queues while every handler thread is busy starting up
LISTEN_BACKLOG = 512

StartResponse = Callable[..., object]
e = html.escape


def completion_code(study_id: str, participant_id: str, secret: str) -> str:
    """Short code a participant can paste into a crowdsourcing platform as proof of completion:
    an HMAC of (study, participant) under the server's ``secret`` (:meth:`ResponseStore.secret`),
    so it cannot be computed from the public study id and participant id alone."""
    msg = f"{study_id}\0{participant_id}".encode()
    return hmac.new(secret.encode(), msg, hashlib.sha256).hexdigest()[:12].upper()


class IncompleteRequest(StudyError):
    """A request body that ended (or stalled past :data:`REQUEST_TIMEOUT`) before its Content-Length."""


class SurveyApp:
    """WSGI application serving one :class:`Study` and storing answers in a :class:`ResponseStore`."""

    def __init__(self, study: Study, store: ResponseStore):
        self.study = study
        self.store = store
        self._by_id = {q.question_id: q for q in study.questions}

    # ------------------------------------------------------------------ plumbing
    def __call__(self, environ: dict, start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("PATH_INFO", "/") or "/"
        try:
            if path == "/" and method == "GET":
                return self._start_page(environ, start_response)
            if path == "/start" and method == "POST":
                return self._start(environ, start_response)
            if path == "/q" and method == "GET":
                return self._question_page(environ, start_response)
            if path == "/answer" and method == "POST":
                return self._answer(environ, start_response)
            if path == "/done" and method == "GET":
                return self._done(environ, start_response)
            if path == "/logout" and method in ("GET", "POST"):
                return self._redirect(start_response, "/", clear_cookie=True)
            if path == "/healthz":
                return self._send(start_response, HTTPStatus.OK, b"ok\n", "text/plain; charset=utf-8")
            if path.startswith("/static/") and method == "GET":
                return self._static(path[len("/static/"):], start_response)
            if path in ("/", "/start", "/q", "/answer", "/done"):
                return self._error(start_response, HTTPStatus.METHOD_NOT_ALLOWED, f"{method} is not allowed here.")
            return self._error(start_response, HTTPStatus.NOT_FOUND, "There is no such page.")
        except Exception as exc:  # pragma: no cover - last resort, keep the server alive
            print(f"survey: error serving {method} {path}: {exc!r}", file=sys.stderr)
            return self._error(start_response, HTTPStatus.INTERNAL_SERVER_ERROR, "Something went wrong.")

    @staticmethod
    def _send(start_response: StartResponse, status: HTTPStatus, body: bytes, ctype: str,
              headers: list[tuple[str, str]] | None = None) -> list[bytes]:
        hdrs = [("Content-Type", ctype), ("Content-Length", str(len(body))),
                ("Cache-Control", "no-store"),
                ("Content-Security-Policy", "default-src 'self'; script-src 'none'; object-src 'none'; "
                                            "base-uri 'none'; form-action 'self'"),
                ("X-Content-Type-Options", "nosniff")]
        hdrs += headers or []
        start_response(f"{status.value} {status.phrase}", hdrs)
        return [body]

    def _html(self, start_response: StartResponse, title: str, body: str,
              status: HTTPStatus = HTTPStatus.OK, headers: list[tuple[str, str]] | None = None) -> list[bytes]:
        page = (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{e(title)}</title><link rel=\"stylesheet\" href=\"/static/style.css\"></head>"
            f"<body><main>{body}</main></body></html>\n"
        )
        return self._send(start_response, status, page.encode("utf-8"), "text/html; charset=utf-8", headers)

    def _redirect(self, start_response: StartResponse, location: str, pid: str | None = None,
                  token: str | None = None, clear_cookie: bool = False) -> list[bytes]:
        headers = [("Location", location)]
        if pid is not None:
            headers.append(("Set-Cookie", f"{COOKIE}={quote(pid)}; Path=/; HttpOnly; SameSite=Lax"))
            headers.append(("Set-Cookie", f"{TOKEN_COOKIE}={quote(token or '')}; Path=/; HttpOnly; SameSite=Lax"))
        if clear_cookie:
            for name in (COOKIE, TOKEN_COOKIE):
                headers.append(("Set-Cookie", f"{name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"))
        return self._send(start_response, HTTPStatus.SEE_OTHER, b"", "text/plain; charset=utf-8", headers)

    def _error(self, start_response: StartResponse, status: HTTPStatus, message: str) -> list[bytes]:
        body = (f"<h1>{e(status.phrase)}</h1><p>{e(message)}</p>"
                "<p><a href=\"/\">Back to the start page</a></p>")
        return self._html(start_response, status.phrase, body, status)

    def _static(self, name: str, start_response: StartResponse) -> list[bytes]:
        if name not in STATIC_FILES:
            return self._error(start_response, HTTPStatus.NOT_FOUND, "There is no such file.")
        return self._send(start_response, HTTPStatus.OK, (STATIC_DIR / name).read_bytes(), STATIC_FILES[name])

    @staticmethod
    def _form(environ: dict) -> dict[str, str]:
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > MAX_BODY:
            raise StudyError("form too large")
        try:
            raw = environ["wsgi.input"].read(length) if length > 0 else b""
        except TimeoutError:
            raise IncompleteRequest("the request body is shorter than its Content-Length") from None
        if len(raw) < length:
            raise IncompleteRequest("the request body is shorter than its Content-Length")
        parsed = parse_qs(raw.decode("utf-8", errors="replace"), keep_blank_values=True)
        return {k: v[0] for k, v in parsed.items()}

    @staticmethod
    def _cookies(environ: dict) -> tuple[str | None, str | None]:
        """The participant id and token the request's cookies name (not checked)."""
        from urllib.parse import unquote

        cookie = SimpleCookie()
        try:
            cookie.load(environ.get("HTTP_COOKIE", ""))
        except CookieError:
            return None, None
        pid = unquote(cookie[COOKIE].value) if COOKIE in cookie else None
        token = unquote(cookie[TOKEN_COOKIE].value) if TOKEN_COOKIE in cookie else None
        return (pid if pid and PARTICIPANT_RE.match(pid) else None), token

    def _participant(self, environ: dict) -> str | None:
        """The participant the request acts as: the id of its cookie, when its token cookie is that
        participant's token; else ``None``."""
        pid, token = self._cookies(environ)
        if pid is None or not self.store.check_token(self.study.study_id, pid, token):
            return None
        return pid

    def _token(self, environ: dict) -> str:
        return self._cookies(environ)[1] or ""

    # ------------------------------------------------------------------ state
    def _progress(self, pid: str) -> tuple[list[str], dict[str, str]]:
        order = self.study.order_for(pid)
        answered = self.store.answered(self.study.study_id, pid)
        return order, answered

    def _next_question(self, pid: str) -> tuple[int, Question] | None:
        order, answered = self._progress(pid)
        for i, qid in enumerate(order):
            if qid not in answered:
                return i, self._by_id[qid]
        return None

    # ------------------------------------------------------------------ pages
    def _start_page(self, environ: dict, start_response: StartResponse, error: str = "",
                    status: HTTPStatus = HTTPStatus.OK) -> list[bytes]:
        pid = self._participant(environ)
        s = self.study
        parts = [f"<h1>{e(s.title)}</h1>"]
        if s.instructions:
            parts += [f"<p class=\"instructions\">{e(p)}</p>" for p in s.instructions.split("\n\n") if p.strip()]
        parts.append(f"<p>This survey has {len(s.questions)} questions. You can stop at any time and "
                     "continue later by entering the same participant ID.</p>")
        if pid:
            parts.append(f"<p class=\"resume\">Welcome back, <strong>{e(pid)}</strong>. "
                         "<a href=\"/q\">Continue the survey</a> or enter another ID below.</p>")
        if error:
            parts.append(f"<p class=\"error\" role=\"alert\">{e(error)}</p>")
        parts.append(
            "<form method=\"post\" action=\"/start\" class=\"start\">"
            "<label for=\"participant_id\">Participant ID</label> "
            "<input type=\"text\" id=\"participant_id\" name=\"participant_id\" required maxlength=\"64\" "
            "pattern=\"[A-Za-z0-9][A-Za-z0-9._@\\-]*\" autocomplete=\"off\"> "
            "<label for=\"resume_code\">Resume code (when you continue)</label> "
            "<input type=\"text\" id=\"resume_code\" name=\"resume_code\" maxlength=\"32\" autocomplete=\"off\"> "
            "<button type=\"submit\" id=\"start\">Start</button></form>"
            "<p class=\"hint\">Letters, digits, '.', '_', '@' and '-' only (at most 64 characters). To continue "
            "in another browser, enter the resume code shown on your question pages as well.</p>"
        )
        return self._html(start_response, s.title, "".join(parts), status)

    def _start(self, environ: dict, start_response: StartResponse) -> list[bytes]:
        try:
            form = self._form(environ)
        except IncompleteRequest:
            return self._error(start_response, HTTPStatus.BAD_REQUEST, "The form arrived incomplete; please send it again.")
        except StudyError:
            return self._error(start_response, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The form is too large.")
        pid = form.get("participant_id", "").strip()
        if not PARTICIPANT_RE.match(pid):
            return self._start_page(environ, start_response,
                                    error="Please enter a participant ID of 1-64 letters, digits, '.', "
                                          "'_', '@' or '-' (starting with a letter or digit).",
                                    status=HTTPStatus.BAD_REQUEST)
        token = self.store.register(self.study.study_id, pid)
        if token is None:  # started before: only with that participant's token
            pid_cookie, token_cookie = self._cookies(environ)
            given = form.get("resume_code", "").strip()
            token = next((t for t in (given, token_cookie if pid_cookie == pid else None)
                          if t and self.store.check_token(self.study.study_id, pid, t)), None)
            if token is None:
                return self._start_page(environ, start_response,
                                        error=f"Participant ID {pid} has already started this survey. To continue, "
                                              "enter it together with the resume code shown on your question "
                                              "pages." + (" That resume code is not right." if given else ""),
                                        status=HTTPStatus.FORBIDDEN)
        return self._redirect(start_response, "/q", pid=pid, token=token)

    def _question_page(self, environ: dict, start_response: StartResponse) -> list[bytes]:
        pid = self._participant(environ)
        if pid is None:
            return self._redirect(start_response, "/")
        nxt = self._next_question(pid)
        if nxt is None:
            return self._redirect(start_response, "/done")
        index, q = nxt
        body = (f"<p class=\"who\">Participant <strong>{e(pid)}</strong> · "
                "<a href=\"/logout\">not you?</a> · resume code "
                f"<code id=\"resume-code\">{e(self._token(environ))}</code> (with your ID, it lets you continue "
                "in another browser; keep it to yourself)</p>"
                f"<h2 id=\"progress\">Question {index + 1} out of {len(self.study.questions)}</h2>"
                + render_question(q, self.study.model_labels))
        return self._html(start_response, f"Question {index + 1}", body)

    def _answer(self, environ: dict, start_response: StartResponse) -> list[bytes]:
        claimed = self._cookies(environ)[0]
        if claimed is None:
            return self._redirect(start_response, "/")
        try:
            form = self._form(environ)
        except IncompleteRequest:
            return self._error(start_response, HTTPStatus.BAD_REQUEST, "The form arrived incomplete; please send it again.")
        except StudyError:
            return self._error(start_response, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "The form is too large.")
        pid = self._participant(environ)
        if pid is None:
            return self._error(start_response, HTTPStatus.FORBIDDEN,
                               "This browser has not started the survey as this participant; enter your "
                               "participant ID (and, to continue, your resume code) on the start page first.")
        qid = form.get("question_id", "")
        q = self._by_id.get(qid)
        if q is None:
            return self._error(start_response, HTTPStatus.BAD_REQUEST, "Unknown question; please go back.")
        # only the current question, or one already answered (going back changes the answer)
        order, answered = self._progress(pid)
        if qid not in answered and qid != next((i for i in order if i not in answered), None):
            return self._error(start_response, HTTPStatus.CONFLICT,
                               "This is not your current question; please continue with the survey.")
        answer = form.get("answer", "")
        try:
            parse_answer(q, answer)
        except StudyError:
            return self._error(start_response, HTTPStatus.BAD_REQUEST,
                               "Please choose one of the answers before pressing Next.")
        self.store.add_answer(self.study.study_id, pid, qid, answer)  # the latest answer counts
        return self._redirect(start_response, "/q")

    def _done(self, environ: dict, start_response: StartResponse) -> list[bytes]:
        pid = self._participant(environ)
        if pid is None:
            return self._redirect(start_response, "/")
        if self._next_question(pid) is not None:
            return self._redirect(start_response, "/q")
        code = completion_code(self.study.study_id, pid, self.store.secret())
        body = ("<h1 id=\"thanks\">Thank you!</h1>"
                f"<p>You have answered all {len(self.study.questions)} questions. Your answers are saved.</p>"
                f"<p>Completion code: <code id=\"completion-code\">{e(code)}</code></p>")
        return self._html(start_response, "Thank you", body)


# ---------------------------------------------------------------------- rendering
def _evidence_list(items: Iterable[str], css_id: str) -> str:
    items = list(items)
    if not items:
        return f"<p class=\"evidence empty\" id=\"{css_id}\">(no evidence found)</p>"
    lis = "".join(f"<li>{e(t)}</li>" for t in items)
    return f"<ul class=\"evidence\" id=\"{css_id}\">{lis}</ul>"


def render_question(q: Question, model_labels: tuple[str, str]) -> str:
    """HTML of one question (everything escaped): the shown content and the answer form."""
    noun = q.doc_noun
    a, b = model_labels
    if q.task == 1:
        head = (f"<p class=\"prompt\">Both {e(a)} and {e(b)} classify the following {e(noun)} as "
                f"<strong>&ldquo;{e(q.predicted_class or '')}&rdquo;</strong>. You do not see the "
                f"{e(noun)} itself, only the parts of it each robot based its decision on.</p>"
                "<div class=\"pair\">"
                f"<section><h3>{e(a)}:</h3>{_evidence_list(q.evidence_a, 'evidence-a')}</section>"
                f"<section><h3>{e(b)}:</h3>{_evidence_list(q.evidence_b, 'evidence-b')}</section>"
                "</div><p class=\"question\">Which robot is more reasonable?</p>")
    elif q.task == 2:
        head = (f"<p class=\"prompt\">These text fragments come from one {e(noun)}. "
                f"Which class do you think the {e(noun)} belongs to?</p>{_evidence_list(q.evidence, 'evidence')}")
    else:
        pred = q.predicted_class or ""
        prob = q.predicted_probability
        others = [c for c in q.class_names if c != pred]
        against = (f"Evidence for the <strong>{e(others[0])}</strong> class:" if len(others) == 1
                   else f"Evidence against the <strong>{e(pred)}</strong> class:")
        head = (f"<p class=\"prompt\">A robot read a {e(noun)} and was not sure about its class. "
                "Using the information below, guess the actual class.</p>"
                f"<p class=\"prediction\" id=\"prediction\">Predicted class: <strong>{e(pred)}</strong>"
                + (f" (probability {prob:.2f})" if prob is not None else "") + "</p>"
                f"<p>Evidence for the <strong>{e(pred)}</strong> class:</p>"
                f"{_evidence_list(q.evidence, 'evidence')}"
                f"<p>{against}</p>{_evidence_list(q.counter_evidence, 'counter-evidence')}")
    options = "".join(
        f"<li><label><input type=\"radio\" name=\"answer\" value=\"{e(code)}\" required> {e(label)}</label></li>"
        for code, label in answer_options(q, model_labels)
    )
    return (f"<div class=\"task task-{q.task}\">{head}</div>"
            "<form method=\"post\" action=\"/answer\" class=\"answer\">"
            f"<input type=\"hidden\" name=\"question_id\" value=\"{e(q.question_id)}\">"
            f"<fieldset><legend>Your answer:</legend><ul class=\"options\">{options}</ul></fieldset>"
            "<button type=\"submit\" id=\"next\">Next</button></form>")


# ---------------------------------------------------------------------- server
class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = LISTEN_BACKLOG  # socketserver's default of 5 resets connections under a crowd


class _Handler(WSGIRequestHandler):
    timeout = REQUEST_TIMEOUT  # a stalled client frees its thread instead of holding it forever

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        if os.environ.get("XAIBENCH_QUIET") != "1":
            super().log_message(format, *args)


def make_survey_server(study: Study, db: str | os.PathLike, host: str = "127.0.0.1",
                       port: int = 8765, request_timeout: float = REQUEST_TIMEOUT) -> WSGIServer:
    """A ready-to-run threaded WSGI server (``port=0`` picks a free port: see ``server_port``).

    ``request_timeout``: seconds a connection may stay silent before it is dropped (must be > 0).
    """
    if not request_timeout > 0:
        raise ValueError(f"request_timeout must be a positive number of seconds; got {request_timeout!r}")
    app = SurveyApp(study, ResponseStore(db))
    handler = type("_TimedHandler", (_Handler,), {"timeout": float(request_timeout)})
    return make_server(host, port, app, server_class=_ThreadingWSGIServer, handler_class=handler)


def serve_in_thread(study: Study, db: str | os.PathLike, host: str = "127.0.0.1",
                    port: int = 0, request_timeout: float = REQUEST_TIMEOUT) -> tuple[WSGIServer, threading.Thread]:
    """Start the server in a daemon thread (tests); stop with ``server.shutdown()``."""
    server = make_survey_server(study, db, host, port, request_timeout)
    thread = threading.Thread(target=server.serve_forever, name="xaibench-survey", daemon=True)
    thread.start()
    return server, thread
