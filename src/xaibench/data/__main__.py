"""Command line: ``python -m xaibench.data {fetch,process,list} ...``.

* ``fetch [NAME ...|--all] [--force] [--verify]`` fills ``data/raw/<name>/`` (see
  :mod:`xaibench.data.fetch`);
* ``process [NAME ...|--all] [--refresh]`` builds the parquet caches ``data/processed/<name>.parquet``
  (CEBaB through :func:`xaibench.data.cebab.load_cebab`);
* ``list`` prints the known datasets and whether they are fetched/processed.
"""
from __future__ import annotations

import argparse
import sys
import time

from .fetch import RAW_SPECS, DataError, fetch_raw, is_complete, remove_leftovers
from .loaders import DATASETS, load, processed_path


def _names(args: argparse.Namespace, known: list[str]) -> list[str]:
    if args.all and args.names:
        raise SystemExit("give dataset names or --all, not both")
    if args.all:
        return known
    if not args.names:
        raise SystemExit(f"name the datasets to use, or --all; known: {' '.join(known)}")
    bad = [n for n in args.names if n not in known]
    if bad:
        raise SystemExit(f"unknown dataset(s) {bad}; known: {' '.join(known)}")
    return list(args.names)


def _report_leftovers(removed) -> None:
    for p in removed:
        print(f"{'':16s} removed {p}, left over by an interrupted fetch", flush=True)


def _fetch(args: argparse.Namespace) -> int:
    names = _names(args, list(RAW_SPECS))
    _report_leftovers(remove_leftovers())
    for name in names:
        t0 = time.perf_counter()
        rep = fetch_raw(name, force=args.force, verify=args.verify)
        dt = time.perf_counter() - t0
        what = {"present": "already present"}.get(rep.action, rep.action)
        print(f"{name:16s} {what:15s} {dt:6.1f} s  {rep.path}", flush=True)
        _report_leftovers(rep.cleaned)
        if rep.action == "repaired":
            shown = rep.problems[:5] + ([f"... and {len(rep.problems) - 5} more"] if len(rep.problems) > 5 else [])
            print(f"{'':16s} re-extracted because: " + "; ".join(shown), flush=True)
    return 0


def _process(args: argparse.Namespace) -> int:
    for name in _names(args, list(DATASETS)):
        t0 = time.perf_counter()
        if name == "cebab":
            try:
                df = load("cebab")
            except ImportError as e:
                print(f"{name:16s} skipped: xaibench.data.cebab is not available ({e})", flush=True)
                continue
            print(f"{name:16s} {len(df):7d} rows  {time.perf_counter() - t0:6.1f} s  (xaibench.data.cebab)",
                  flush=True)
            continue
        df = load(name, refresh=args.refresh)
        splits = ", ".join(f"{k} {v}" for k, v in df["split"].value_counts(sort=False).items())
        print(f"{name:16s} {len(df):7d} rows  {time.perf_counter() - t0:6.1f} s  {processed_path(name)}  ({splits})",
              flush=True)
    return 0


def _list(args: argparse.Namespace) -> int:
    for name, info in DATASETS.items():
        raw = "fetched" if is_complete(name) else "-"
        proc = "processed" if processed_path(name).exists() else "-"
        print(f"{name:16s} {raw:8s} {proc:10s} {info.description}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m xaibench.data", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="fill data/raw/<name>/ from the mirror or the original source")
    f.add_argument("names", nargs="*")
    f.add_argument("--all", action="store_true")
    f.add_argument("--force", action="store_true", help="re-fetch even if complete")
    f.add_argument("--verify", action="store_true", help="re-check counts and checksums of complete folders")
    f.set_defaults(func=_fetch)
    q = sub.add_parser("process", help="build data/processed/<name>.parquet")
    q.add_argument("names", nargs="*")
    q.add_argument("--all", action="store_true")
    q.add_argument("--refresh", action="store_true", help="rebuild caches even if present")
    q.set_defaults(func=_process)
    ls = sub.add_parser("list", help="show datasets and their state")
    ls.set_defaults(func=_list)
    args = p.parse_args(argv)
    try:
        return args.func(args)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
