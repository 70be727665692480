"""What a committed report (reports/full/*.ipynb) shows a reader: every figure its notebook saves,
no absolute path of the machine that ran it, no progress-bar litter.  The checks themselves are
tested on hand-made notebooks first."""
from pathlib import Path

import nbformat
import pytest

from tests.helpers.report_checks import (claims_cell_problems, figures_required, html_table_column, machine_paths,
                                         missing_figures, plain_table_column, progress_litter, read)

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted((ROOT / "reports" / "full").glob("*.ipynb"))


def _source_of(report: Path) -> Path:
    return ROOT / "notebooks" / f"{report.stem.split('-')[0]}.ipynb"


# ------------------------------------------------------------------ the checks on hand-made notebooks
def _nb(*cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _png(alt="a figure"):
    return nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": alt})


def test_figures_required_counts_calls_outside_loops_and_one_per_cell_for_loops():
    assert figures_required("save_figure(fig, 'a')\nplotting.save_figure(g.figure, 'b')") == 2
    assert figures_required("if ok:\n    save_figure(fig, 'a')\nsave_figure(f, 'b', show=False)") == 1
    assert figures_required("for d in ds:\n    save_figure(fig, d)\n    save_figure(fig, d + 'x')") == 1
    assert figures_required("save_figure(f, 'a')\n[save_figure(f, n) for n in ns]") == 2
    assert figures_required("def f():\n    save_figure(f, 'a')\n") == 1
    assert figures_required("%matplotlib inline\nsave_figure(f, 'a')") == 1
    # one of two branches runs: only what both show is required
    assert figures_required("if on:\n    save_figure(f, 'a')\n    save_figure(g, 'b')\nelse:\n    print('off')") == 0
    assert figures_required("if on:\n    save_figure(f, 'a')\n    save_figure(g, 'b')\nelse:\n    save_figure(h, 'c')\n"
                            "save_figure(k, 'd')") == 2
    assert figures_required("fig.savefig('x.png')\nprint('save_figure')") == 0
    assert figures_required("this is not python (") == 0


def test_missing_figures_compares_the_report_with_its_notebook():
    src = _nb(nbformat.v4.new_code_cell("save_figure(f, 'a')"), nbformat.v4.new_markdown_cell("save_figure"),
              nbformat.v4.new_code_cell("for x in xs:\n    save_figure(f, x)"))
    ok = _nb(nbformat.v4.new_code_cell("save_figure(f, 'a')", outputs=[_png()]),
             nbformat.v4.new_code_cell("for x in xs:\n    save_figure(f, x)", outputs=[_png(), _png()]))
    assert missing_figures(ok, src) is None
    short = _nb(nbformat.v4.new_code_cell("save_figure(f, 'a')", outputs=[_png()]),
                nbformat.v4.new_code_cell("for x in xs:\n    save_figure(f, x)", outputs=[]))
    assert missing_figures(short, src) == "1 image/png outputs, but its notebook saves at least 2 (code cell: figures {0: 1, 1: 1})"


def test_machine_paths_and_progress_litter_are_found_in_outputs_only():
    outs = [nbformat.v4.new_output("stream", name="stderr", text="/work/main/.venv/lib/x.py:1: Warning\nok\n"),
            nbformat.v4.new_output("stream", name="stdout", text="wrote figures/tables/x.csv\n"),
            nbformat.v4.new_output("stream", name="stderr", text="\r 40%|####   | 4/10 [00:01<00:02,  2.9it/s]"),
            nbformat.v4.new_output("execute_result", execution_count=1,
                                   data={"text/plain": "PosixPath('/home/u/xaibench/figures/a.png')",
                                         "image/png": "L3dvcmsvL2hvbWUv"}),  # base64 is not read
            nbformat.v4.new_output("display_data", data={"text/html": "<a href='https://x.org/home/'>x</a>"}),
            nbformat.v4.new_output("error", ename="E", evalue="v",
                                   traceback=["File /root/.pyenv/lib/python3.11/site-packages/p.py"])]
    nb = _nb(nbformat.v4.new_code_cell("print('/tmp/x')  # the source is not an output", outputs=outs))
    assert machine_paths(nb) == ["cell 0: /work/main/.venv/lib/x.py:1: Warning",
                                 "cell 0: PosixPath('/home/u/xaibench/figures/a.png')",
                                 "cell 0: File /root/.pyenv/lib/python3.11/site-packages/p.py"]
    assert progress_litter(nb) == ["cell 0: 40%|####   | 4/10 [00:01<00:02,  2.9it/s]"]
    table = _nb(nbformat.v4.new_code_cell("", outputs=[nbformat.v4.new_output(
        "stream", name="stdout", text="| model | acc |\n|:------|----:|\n| cnn   | 50% |\n")]))
    assert progress_litter(table) == [] and machine_paths(table) == []


def _claims_output(verdicts):
    import pandas as pd

    df = pd.DataFrame({"claim": [f"c{i}" for i in range(len(verdicts))], "statement": "a long statement " * 3,
                       "verdict": verdicts, "reason": "ours 0.29 vs paper 1.00: |diff| > 0.1"})
    return nbformat.v4.new_output("execute_result", execution_count=3,
                                  data={"text/html": df.to_html(), "text/plain": repr(df)})


def test_claims_cell_contract():
    good_src = 'from xaibench.evaluation.claims import save_claims\nsave_claims("cebab")'
    cell = nbformat.v4.new_code_cell(good_src, outputs=[_claims_output(["reproduced", "partly", "inconclusive",
                                                                        "not comparable", "precondition"])])
    cell.metadata["tags"] = ["claims"]
    assert claims_cell_problems(_nb(nbformat.v4.new_code_cell("x = 1"), cell), "cebab") == []
    assert claims_cell_problems(_nb(cell), "cf_feedback") == ['the last code cell does not call save_claims("cf_feedback")']
    untagged = nbformat.v4.new_code_cell(good_src, outputs=cell.outputs)
    assert claims_cell_problems(_nb(untagged), "cebab") == ["the last code cell is not tagged 'claims'"]
    wrong = nbformat.v4.new_code_cell(good_src, outputs=[_claims_output(["reproduced", "maybe"])],
                                      metadata={"tags": ["claims"]})
    assert claims_cell_problems(_nb(wrong), "cebab") == [
        "verdicts outside ('reproduced', 'partly', 'inconclusive', 'not reproduced', 'not comparable', "
        "'precondition'): ['maybe']"]
    bare = nbformat.v4.new_code_cell(good_src, metadata={"tags": ["claims"]})
    assert claims_cell_problems(_nb(bare), "cebab") == ["the last code cell shows no table with a 'verdict' column"]
    last_not_claims = _nb(cell, nbformat.v4.new_code_cell("print(1)"))
    assert "the last code cell is not tagged 'claims'" in claims_cell_problems(last_not_claims, "cebab")


def test_table_readers_on_pandas_output():
    import pandas as pd

    df = pd.DataFrame({"claim": ["a", "b"], "verdict": ["not reproduced", "reproduced"]})
    assert html_table_column(df.to_html(), "verdict") == ["not reproduced", "reproduced"]
    assert html_table_column(df.to_html(index=False), "verdict") == ["not reproduced", "reproduced"]
    assert html_table_column(df.to_html(), "nothing") is None
    assert plain_table_column(repr(df), "verdict") == ["not reproduced", "reproduced"]


# ------------------------------------------------------------------ the committed reports
@pytest.mark.parametrize("report", COMMITTED, ids=lambda p: p.stem)
def test_committed_report_shows_every_figure_its_notebook_saves(report):
    source = _source_of(report)
    if not source.exists():
        pytest.skip(f"no notebook {source.name} (test_reports flags the orphan report)")
    problem = missing_figures(read(report), read(source))
    assert problem is None, f"{report.name}: {problem}; rerun it with make"


@pytest.mark.parametrize("report", COMMITTED, ids=lambda p: p.stem)
def test_committed_report_holds_no_machine_path(report):
    found = machine_paths(read(report))
    assert not found, f"{report.name} shows absolute paths of the machine that ran it:\n  " + "\n  ".join(found[:20])


@pytest.mark.parametrize("report", COMMITTED, ids=lambda p: p.stem)
def test_committed_report_holds_no_progress_bars(report):
    found = progress_litter(read(report))
    assert not found, f"{report.name} holds progress-bar output:\n  " + "\n  ".join(found[:20])
