"""The course's content, importable wherever the course is installed.

    pages.py         helpers every book page uses: ``from course import device, seed_everything, ...``
    figures.py       interactive figures (Altair charts drawn by the book's own Vega-Lite):
                     ``from course import interactive_figure``
    tagging_data.py  the capstone's seeded sentence generator (the one source; page 09 shows it)
    capstone.py      the capstone's graded run (seed, epochs, threshold) and the baselines below it
    authoring.py     build instructor notebooks in code, with nbgrader's metadata
    checks/          the hidden tests, one ``chNN_<name>.py`` per assignment (instructor material)

It may import the autograder's check framework (its ``checking`` package, for ``checks/``), never the grading
steps, the term or the commands above them. The page helpers are loaded on first use, so importing ``course.checks`` or
``course.tagging_data`` does not pull in the plotting helpers.
"""
from __future__ import annotations

_PAGE_HELPERS = ("pick_device", "device", "seed_everything", "show_heatmaps", "progress", "check_shape")
_FIGURE_HELPERS = ("interactive_figure",)
__all__ = list(_PAGE_HELPERS + _FIGURE_HELPERS)


def __getattr__(name: str):
    if name in _PAGE_HELPERS:
        from . import pages

        return getattr(pages, name)
    if name in _FIGURE_HELPERS:
        from . import figures

        return getattr(figures, name)
    raise AttributeError(f"module 'course' has no attribute {name!r}")
