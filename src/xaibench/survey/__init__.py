"""Browser survey for the human-grounded evaluation (Lertvittayakumjorn & Toni, 2019).

``python -m xaibench.survey serve --study STUDY.json --db responses.sqlite [--port 8765]`` runs
the questionnaire; ``python -m xaibench.survey export --db responses.sqlite --study STUDY_ID --out
answers.csv`` writes one study's answers (a participant's latest answer per question) in the format
:func:`xaibench.evaluation.human_grounded.score_table` reads; ``python -m xaibench.survey codes
--study STUDY.json --db responses.sqlite`` lists the completion codes of those who finished (codes
are signed with the secret kept beside the database, ``responses.sqlite.secret``).
The study format and the scoring live in :mod:`xaibench.evaluation.human_grounded`.
"""
from .app import SurveyApp, completion_code, make_survey_server, render_question, serve_in_thread
from .storage import EXPORT_COLUMNS, ResponseStore, export_answers

__all__ = ["SurveyApp", "ResponseStore", "EXPORT_COLUMNS", "completion_code", "export_answers",
           "make_survey_server", "render_question", "serve_in_thread"]
