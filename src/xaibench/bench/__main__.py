"""``python -m xaibench.bench <name>``: run one benchmark and write ``figures/tables/bench_<name>.csv``
(and its Markdown rendering).  ``make bench`` runs them all but ``make_all``, which ``make all``
runs at its end.  Each benchmark lives in its own module of :mod:`xaibench.bench`.
``python -m xaibench.bench timings`` (the last step of ``make bench``) measures nothing: it writes
``docs/timings.md`` and the README's timing table from the bench tables (:mod:`xaibench.bench.timings`)."""
from __future__ import annotations

import argparse
from typing import Callable

import pandas as pd

from .. import paths
from .common import BENCHMARKS, write_bench_table


def _run(name: str, args: argparse.Namespace) -> pd.DataFrame:
    """Import the benchmark's module only when it runs (several need torch and trained models)."""
    if name == "training":
        from .training import bench_training
        return bench_training(args.models, args.tasks)
    if name == "cebab":
        from .cebab import bench_cebab
        return bench_cebab()
    if name == "causalm_staging":
        from .causalm_staging import bench_causalm_staging
        return bench_causalm_staging(tasks=tuple(args.tasks))
    if name == "attribution":
        from .attribution import bench_attribution_models
        return bench_attribution_models()
    if name == "faithfulness":
        from .faithfulness import bench_faithfulness
        return bench_faithfulness()
    if name == "attribution_gt":
        from .attribution_gt import bench_attribution_gt
        return bench_attribution_gt()
    if name == "manipulations":
        from .manipulations import bench_manipulations
        return bench_manipulations()
    if name == "augmentation":
        from .augmentation import bench_augmentation
        return bench_augmentation()
    if name == "augmentation_overlap":
        from .augmentation_overlap import bench_augmentation_overlap
        return bench_augmentation_overlap()
    if name == "editors":
        from .editors import bench_editors
        return bench_editors()
    if name == "infillers":
        from .infillers import bench_infillers
        return bench_infillers()
    if name == "optimizer":
        from .optimizer import bench_optimizer
        return bench_optimizer()
    if name == "scorecard":
        from .scorecard import bench_scorecard
        return bench_scorecard()
    if name == "textfooler_deletions":
        from .textfooler_deletions import bench_textfooler_deletions
        return bench_textfooler_deletions()
    if name == "cnn_encode":
        from .cnn_encode import bench_cnn_encode
        return bench_cnn_encode()
    if name == "chain_parts":
        from .chain_parts import bench_chain_parts
        return bench_chain_parts(n_steps=args.steps, parts=args.parts, quick_models=args.quick_models,
                                 scale=args.scale)
    if name == "training_pool":
        from .training_pool import bench_training_pool
        return bench_training_pool(model=args.model)
    if name == "cores":
        from .cores import bench_cores
        return bench_cores(tuple(args.workloads))
    if name == "precision":
        from .precision import bench_precision
        return bench_precision(tuple(args.workloads))
    if name == "make_steps":
        from .make_steps import bench_make_steps
        return bench_make_steps()
    if name == "make_paper":
        from .make_paper import bench_make_paper
        return bench_make_paper(args.targets, keep=args.keep)
    if name == "make_all":
        from .make_all import bench_make_all
        return bench_make_all(args.reports)
    if name == "make_test":
        from .make_test import bench_make_test
        return bench_make_test(keep=args.keep, repeats=args.repeats)
    raise KeyError(name)




def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m xaibench.bench")
    sub = ap.add_subparsers(dest="cmd", required=True)
    subs = {name: sub.add_parser(name, help=text) for name, text in BENCHMARKS.items()}
    sub.add_parser("timings", help="write docs/timings.md and the README's timing table from figures/tables/bench_*.csv")
    subs["training"].add_argument("--models", nargs="+", default=["minilm", "lstm"])
    subs["training"].add_argument("--tasks", nargs="+", default=["binary", "ternary", "5-way"])
    subs["causalm_staging"].add_argument("--tasks", nargs="+", default=["5-way", "ternary"])
    subs["make_all"].add_argument("--reports", default=None, help="folder of executed notebooks (default reports/full)")
    subs["make_test"].add_argument("--keep", action="store_true", help="keep the temporary clone (its make_test.log)")
    subs["make_test"].add_argument("--repeats", type=int, default=1,
                                   help="fresh clones to run make test in, one after another (one row each)")
    subs["make_paper"].add_argument("--targets", nargs="+", required=True,
                                    help="the paper's make targets, e.g. faithfulness, human, or foundation cebab")
    subs["make_paper"].add_argument("--keep", action="store_true", help="keep the temporary clone (its make_paper.log)")
    subs["cores"].add_argument("--workloads", nargs="+", default=["image", "minilm", "bilstm"])
    subs["chain_parts"].add_argument("--steps", type=int, default=9, help="edits per chain")
    subs["chain_parts"].add_argument("--parts", type=int, default=None,
                                     help="parts per run of the new path (default: as run_experiments splits)")
    subs["chain_parts"].add_argument("--scale", type=float, default=1.0, help="texts per dataset times this")
    subs["chain_parts"].add_argument("--quick-models", action="store_true",
                                     help="the quick profile's small predictors and infillers (a check, not a measurement)")
    subs["training_pool"].add_argument("--model", default=None, help="train every part with this model (lstm: a quick check)")
    subs["precision"].add_argument("--workloads", nargs="+", default=["image", "minilm", "bilstm"])
    one = sub.add_parser("_train_one")  # the child process of `training`
    one.add_argument("model")
    one.add_argument("task")
    one.add_argument("out")
    cell = sub.add_parser("_cores_one")  # the child process of `cores`
    cell.add_argument("workload")
    cell.add_argument("out")
    overlap = sub.add_parser("_overlap_one")  # the child process of `augmentation_overlap`
    for a in ("kind", "ahead", "epochs", "out"):
        overlap.add_argument(a)
    return ap


def main(argv: list[str] | None = None, run: Callable[[str, argparse.Namespace], pd.DataFrame] = _run) -> None:
    args = parser().parse_args(argv)
    if args.cmd == "_train_one":
        from .training import train_one

        train_one(args.model, args.task, args.out)
        return
    if args.cmd == "timings":
        from .timings import write_timings

        wrote = write_timings()
        print("wrote " + ", ".join(str(p) for p in wrote) if wrote else "docs/timings.md and the README are current")
        return
    if args.cmd == "_cores_one":
        from .cores import run_workload

        run_workload(args.workload, args.out)
        return
    if args.cmd == "_overlap_one":
        from .augmentation_overlap import run_cell

        run_cell(args.kind, args.ahead, args.epochs, args.out)
        return
    dest = write_bench_table(run(args.cmd, args), f"bench_{args.cmd}.csv")
    print(f"wrote {dest} and {dest.with_suffix('.md').name}")
    # what docs/timings.md reads: rewritten when both of its tables are in the project's tables folder
    if args.cmd in ("make_all", "make_test", "make_paper") and dest.parent == paths.tables_dir() and all(
            (dest.parent / f"bench_{n}.csv").is_file() for n in ("make_all", "make_test")):
        from .timings import write_timings

        for p in write_timings():
            print(f"wrote {p}")


if __name__ == "__main__":
    main()
