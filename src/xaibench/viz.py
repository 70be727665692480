"""Token heat maps of local explanations (HTML for notebooks, PNG for figures/).

Colours: red = relevance *for* the explained class (evidence), blue = against it
(counter-evidence), white = 0.  Each explanation is scaled by its own largest absolute score, so
rows of different methods are comparable in *pattern*, not in magnitude (the authors' heat maps
are min-max normalised per explanation, too).  Every heat map carries its colour scale: a colour bar
labelled :data:`COLOUR_LABEL` from -1 to +1 (PNG), a colour key under the table (HTML).
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

#: colour map of the PNG heat maps (blue = -1, white = 0, red = +1, as the HTML colours)
CMAP = "RdBu_r"
#: what a heat map's colour means: the label of its colour bar (scale -1 to +1)
COLOUR_LABEL = "relevance / the explanation's largest |score|\n(-1 against, 0 none, +1 for the explained class)"


def normalise(scores: Sequence[float]) -> np.ndarray:
    """Scores divided by their largest absolute value (all zeros stay zeros), in [-1, 1]."""
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        return s
    if not np.all(np.isfinite(s)):
        raise ValueError("scores contain NaN or infinite values; check the explainer output")
    peak = np.abs(s).max()
    return s / peak if peak > 0 else np.zeros_like(s)


def _rgba(v: float, alpha_max: float = 0.85) -> str:
    if v >= 0:
        return f"rgba(214, 39, 40, {alpha_max * v:.3f})"
    return f"rgba(31, 119, 180, {alpha_max * -v:.3f})"


def html_tokens(tokens: Sequence[str], scores: Sequence[float]) -> str:
    """One line of HTML: every token in a span coloured by its normalised score (hover shows it)."""
    if len(tokens) != len(scores):
        raise ValueError(f"{len(tokens)} tokens but {len(scores)} scores; pass one score per token")
    norm = normalise(scores)
    spans = [f'<span title="{float(raw):+.3g}" style="background:{_rgba(float(v))};padding:1px 2px;'
             f'border-radius:2px">{html.escape(str(t))}</span>'
             for t, v, raw in zip(tokens, norm, scores)]
    return " ".join(spans)


def html_heatmap(attributions: Mapping[str, Any], title: str = "", label_width: str = "9em") -> str:
    """An HTML table: one row per explanation (``{row label: Attribution}``) of the same text."""
    rows = []
    for name, a in attributions.items():
        rows.append(f'<tr><td style="text-align:right;vertical-align:top;width:{label_width};'
                    f'font-weight:bold;padding-right:8px;white-space:nowrap">{html.escape(str(name))}</td>'
                    f'<td style="text-align:left;line-height:1.9">{html_tokens(a.tokens, a.scores)}</td></tr>')
    head = f"<div style='margin:4px 0'><b>{html.escape(title)}</b></div>" if title else ""
    return (f"{head}<table style='border-collapse:collapse;font-family:monospace;font-size:12px'>{''.join(rows)}</table>"
            f"{html_colour_key()}")


def html_colour_key() -> str:
    """The colour scale of :func:`html_heatmap`: swatches at -1, -0.5, 0, +0.5, +1 and what they mean."""
    swatches = "".join(f'<span style="background:{_rgba(v)};padding:1px 6px;margin:0 1px;border:1px solid #ccc">'
                       f"{name}</span>" for v, name in ((-1.0, "-1"), (-0.5, "-0.5"), (0.0, "0"), (0.5, "+0.5"),
                                                        (1.0, "+1")))
    return ("<div class='xaibench-colour-key' style='font-size:11px;margin:4px 0'>colour scale: "
            f"{swatches} = relevance / the explanation's largest |score| (-1 against, 0 none, +1 for the "
            "explained class; hover a word for its raw score)</div>")


def colour_bar(fig: Any, mappable: Any, axes: Any, **kw: Any) -> Any:
    """A colour bar for ``mappable`` beside ``axes`` (one Axes or a list), ticked at -1, 0 and +1 and
    labelled :data:`COLOUR_LABEL`.  Returns the Colorbar."""
    cbar = fig.colorbar(mappable, ax=axes, **{"fraction": 0.03, "pad": 0.01, **kw})
    cbar.set_ticks([-1, 0, 1])
    cbar.set_label(COLOUR_LABEL, fontsize=7)
    cbar.ax.tick_params(labelsize=7)
    return cbar


def png_heatmap(attributions: Mapping[str, Any], title: str = "", ax: Any = None, max_tokens: int = 60,
                cmap: str = CMAP, colorbar: bool = True) -> Any:
    """A matrix heat map: rows = explanations of the same text, columns = its tokens (first
    ``max_tokens``), cells coloured by normalised relevance, with its colour bar (:func:`colour_bar`;
    ``colorbar=False`` leaves it to the caller, as :func:`heatmap_grid` does).  Returns the matplotlib Axes.

    All explanations must share their tokens (explainers of the same model do); rows whose tokens
    differ (e.g. a subword model) raise a ``ValueError`` -- draw those separately.
    """
    import matplotlib.pyplot as plt

    items = list(attributions.items())
    if not items:
        raise ValueError("no attributions to draw")
    toks = list(items[0][1].tokens)
    for name, a in items[1:]:
        if list(a.tokens) != toks:
            raise ValueError(f"row {name!r} explains different tokens than row {items[0][0]!r}; "
                             "png_heatmap needs explanations of the same tokens")
    n = min(len(toks), max_tokens)
    mat = np.stack([normalise(a.scores)[:n] for _, a in items]) if n else np.zeros((len(items), 0))
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.32 * n + 1.8), 0.38 * len(items) + 1.4))
    image = ax.imshow(mat, cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    ax.set_yticks(range(len(items)), [str(k) for k, _ in items], fontsize=8)
    ax.set_xticks(range(n), toks[:n], rotation=90, fontsize=8)
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    if colorbar:
        colour_bar(ax.figure, image, ax)
    return ax


def heatmap_grid(panels: Sequence[Sequence[tuple[Mapping[str, Any], str]]], max_tokens: int = 60,
                 suptitle: str = "", figsize: tuple[float, float] | None = None) -> Any:
    """A figure of :func:`png_heatmap` panels: ``panels[i][j] = ({row label: Attribution}, title)``, with
    one colour bar for all of them (:func:`colour_bar`; every panel shares the scale -1 to +1).

    ``figsize`` defaults to 0.3 inch per token of the longest panel (at least 8 inches) by 4.6
    inches per row of panels.  Returns the figure (save it with :func:`xaibench.plotting.save_figure`).
    """
    import matplotlib.pyplot as plt
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    if not panels or not panels[0]:
        raise ValueError("no panels to draw")
    if figsize is None:
        n_tok = max(len(next(iter(attrs.values())).tokens) for row in panels for attrs, _ in row)
        figsize = (max(8, 0.3 * n_tok + 2), 4.6 * len(panels))
    fig, axes = plt.subplots(len(panels), len(panels[0]), figsize=figsize, squeeze=False)
    for i, row in enumerate(panels):
        for j, (attrs, title) in enumerate(row):
            png_heatmap(attrs, ax=axes[i, j], max_tokens=max_tokens, title=title, colorbar=False)
    if suptitle:
        fig.suptitle(suptitle, x=0.01, ha="left", fontsize=10)
    fig.tight_layout()
    colour_bar(fig, ScalarMappable(Normalize(-1, 1), CMAP), list(axes.flat),
               fraction=min(0.05, 0.6 / figsize[0]), aspect=max(10, 8 * len(panels)))
    return fig


__all__ = ["CMAP", "COLOUR_LABEL", "normalise", "html_tokens", "html_heatmap", "html_colour_key", "colour_bar",
           "png_heatmap", "heatmap_grid"]
