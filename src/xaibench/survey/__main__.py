"""Command line of the survey: ``serve``, ``export``, ``validate`` and ``score``.

Examples::

    python -m xaibench.survey serve --study src/xaibench/resources/survey_demo_study.json \\
        --db data/survey/demo.sqlite --port 8765
    python -m xaibench.survey export --db data/survey/demo.sqlite --study demo --out answers.csv
    python -m xaibench.survey codes --study STUDY.json --db data/survey/demo.sqlite
    python -m xaibench.survey score --study STUDY.json --answers answers.csv
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m xaibench.survey",
                                description="Human-grounded evaluation survey (Lertvittayakumjorn & Toni 2019).")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the survey web app")
    s.add_argument("--study", required=True, help="study JSON file (format: xaibench.evaluation.human_grounded)")
    s.add_argument("--db", required=True, help="SQLite file for the answers (created if missing)")
    s.add_argument("--host", default="127.0.0.1",
                   help="interface to listen on (default 127.0.0.1; 0.0.0.0 for other machines)")
    s.add_argument("--port", type=int, default=8765, help="TCP port (default 8765; 0 = any free port)")

    x = sub.add_parser("export", help="write the stored answers as CSV")
    x.add_argument("--db", required=True, help="SQLite file written by `serve`")
    x.add_argument("--out", required=True, help="CSV file to write")
    x.add_argument("--study", "--study-id", dest="study_id", default=None,
                   help="study id (or study JSON file) to export; needed when the database holds several")

    k = sub.add_parser("codes", help="list the completion codes of participants who finished a study")
    k.add_argument("--study", required=True, help="study JSON file")
    k.add_argument("--db", required=True, help="SQLite file written by `serve`")

    v = sub.add_parser("validate", help="check a study file and print a summary")
    v.add_argument("--study", required=True)

    c = sub.add_parser("score", help="score exported answers (average human score and Fleiss' kappa)")
    c.add_argument("--study", required=True)
    c.add_argument("--answers", required=True, help="CSV written by `export`")
    c.add_argument("--out", default=None, help="also write the score table as CSV here")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from ..evaluation import human_grounded as hg

    try:
        if args.command == "serve":
            from .app import make_survey_server

            study = hg.load_study(args.study)
            server = make_survey_server(study, args.db, args.host, args.port)
            host, port = server.server_address[:2]
            print(f"Serving study {study.study_id!r} ({len(study.questions)} questions) at "
                  f"http://{host}:{port}/ -- answers go to {args.db}; Ctrl+C stops.", flush=True)
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                print("\nstopped.")
            finally:
                server.server_close()
        elif args.command == "export":
            from .storage import export_answers

            study_id = args.study_id
            if study_id is not None and study_id.endswith(".json"):
                study_id = hg.load_study(study_id).study_id
            out = export_answers(args.db, args.out, study_id)
            import pandas as pd

            n = len(pd.read_csv(out))
            print(f"wrote {n} answers to {out}")
        elif args.command == "codes":
            from pathlib import Path

            from .app import completion_code
            from .storage import ResponseStore

            if not Path(args.db).is_file():
                raise FileNotFoundError(f"response database {args.db} does not exist")
            study, store = hg.load_study(args.study), ResponseStore(args.db)
            frame = store.to_frame(study.study_id)
            n_done = frame.groupby("participant_id")["question_id"].nunique()
            for pid, n in n_done.items():
                if n == len(study.questions):
                    print(f"{pid}\t{completion_code(study.study_id, pid, store.secret())}")
        elif args.command == "validate":
            study = hg.load_study(args.study)
            from collections import Counter

            per_task = Counter(q.task for q in study.questions)
            print(f"{args.study}: study {study.study_id!r}, {len(study.questions)} questions "
                  f"({', '.join(f'task {t}: {n}' for t, n in sorted(per_task.items()))}) -- OK")
        elif args.command == "score":
            study = hg.load_study(args.study)
            answers = hg.read_answers(args.answers)
            if "study_id" in answers.columns:  # an export of several studies: score this one's
                answers = answers[answers["study_id"] == study.study_id]
                if answers.empty:
                    raise hg.StudyError(f"{args.answers} has no answers of study {study.study_id!r}")
            table = hg.score_table(study, answers)
            print(table.to_string(index=False))
            kt = hg.kappa_table(study, answers)
            if not kt.empty:
                print("\nFleiss' kappa:")
                print(kt.to_string(index=False))
            if args.out:
                from .. import io

                io.write_csv(args.out, table)
                print(f"\nwrote {args.out}")
    except (hg.StudyError, ValueError, FileNotFoundError, IsADirectoryError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
