"""The book's helpers, written once and used by every chapter page.

    from course import device, seed_everything, show_heatmaps, progress   # (this module, re-exported)

* ``pick_device()`` / ``device``: $COURSE_DEVICE if set, else CUDA, then MPS, then CPU.
* ``seed_everything(seed)``: Python, NumPy and torch seeded together; returns a
  ``torch.Generator`` for code that wants an explicit one.
* ``show_heatmaps(matrices, ...)``: a grid of heatmaps from one tensor or a list
  (e.g. every head of a multi-head layer in one call).
* ``progress(iterable, ...)``: the progress bar used for training loops.
"""
from __future__ import annotations

import os
import random
from typing import Sequence

import numpy as np
import torch

from .device_rule import pick_device

__all__ = ["pick_device", "device", "seed_everything", "show_heatmaps", "progress", "check_shape"]


device = pick_device()


def seed_everything(seed: int = 0) -> torch.Generator:
    """Seed Python, NumPy and torch (all devices); return a CPU generator with the same seed."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def check_shape(tensor: torch.Tensor, shape: tuple) -> torch.Tensor:
    """Assert a tensor's shape (``None`` matches any size) and return it unchanged."""
    ok = len(tensor.shape) == len(shape) and all(s is None or s == t for s, t in zip(shape, tensor.shape))
    if not ok:
        raise AssertionError(f"expected shape {shape}, got {tuple(tensor.shape)}")
    return tensor


def _as_matrices(matrices) -> list[np.ndarray]:
    if isinstance(matrices, torch.Tensor):
        m = matrices.detach().float().cpu()
        if m.dim() == 2:
            m = m.unsqueeze(0)
        return [x.numpy() for x in m.reshape(-1, *m.shape[-2:])]
    return [np.asarray(x.detach().float().cpu() if isinstance(x, torch.Tensor) else x) for x in matrices]


def show_heatmaps(
    matrices,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    titles: Sequence[str] | None = None,
    *,
    ncols: int | None = None,
    cmap: str = "viridis",
    annotate: bool | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
    size: float = 2.8,
    xlabel: str | None = None,
    ylabel: str | None = None,
    suptitle: str | None = None,
    colorbar: bool = True,
):
    """Draw one or many matrices as a grid of heatmaps and return the figure.

    ``matrices`` is a 2-D tensor, a tensor of shape (..., R, C) (one panel per
    leading index) or a list of 2-D arrays. Values are printed in the cells when
    the matrices are small (``annotate=None`` decides by size).
    """
    import matplotlib.pyplot as plt

    mats = _as_matrices(matrices)
    n = len(mats)
    ncols = ncols or min(n, 4)
    nrows = (n + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols + 0.6, size * nrows + 0.4), squeeze=False)
    lo = min(float(m.min()) for m in mats) if vmin is None else vmin
    hi = max(float(m.max()) for m in mats) if vmax is None else vmax
    image = None
    for k, ax in enumerate(axes.flat):
        if k >= n:
            ax.axis("off")
            continue
        m = mats[k]
        image = ax.imshow(m, cmap=cmap, vmin=lo, vmax=hi)
        if titles is not None:
            ax.set_title(titles[k], fontsize=10)
        for labels, setter, count in ((col_labels, ax.set_xticks, m.shape[1]), (row_labels, ax.set_yticks, m.shape[0])):
            if labels is not None:
                setter(range(count), labels=list(labels))
            elif count <= 12:
                setter(range(count))
        if col_labels is not None and sum(len(str(x)) for x in col_labels) > 2.2 * size * 2:
            ax.tick_params(axis="x", labelrotation=90)  # long labels would overlap
        if xlabel:
            ax.set_xlabel(xlabel)
        if ylabel and k % ncols == 0:
            ax.set_ylabel(ylabel)
        if annotate or (annotate is None and m.size <= 64):
            mid = (lo + hi) / 2
            for (i, j), v in np.ndenumerate(m):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="black" if v > mid else "white")
    if colorbar and image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def progress(iterable=None, **kwargs):
    """A text progress bar on stdout (no widgets), so it shows in the built book too.

    It updates in place in a terminal and in Jupyter (which redraws the line). Elsewhere,
    above all in the book's build, every update would stay on the page as a line of its
    own: there the bar is drawn once, when the loop ends."""
    import sys

    from tqdm.std import tqdm

    kwargs.setdefault("file", sys.stdout)
    kwargs.setdefault("ascii", True)
    kwargs.setdefault("ncols", 80)
    stream = kwargs["file"]
    live = (hasattr(stream, "isatty") and stream.isatty()) or bool(os.environ.get("JPY_SESSION_NAME"))
    if live:
        kwargs.setdefault("mininterval", 1.0)
        return tqdm(iterable, **kwargs)

    class FinalLine(tqdm):
        """Draws nothing while it runs and its final state once, on close."""

        def close(self):
            if not getattr(self, "disable", True):
                self.delay = 0  # now counts as shown: close() draws the final bar and a newline
            super().close()

    kwargs.pop("mininterval", None)
    kwargs.pop("delay", None)
    return FinalLine(iterable, delay=float("inf"), mininterval=float("inf"), **kwargs)
