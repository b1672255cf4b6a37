"""Tools for the repository, outside the grading package: serve the built book with live
code (``serve``), run every notebook (``notebook_runs``: timings, gpu-check), and the
benchmarks (``bench_book``, ``bench_grading``). Run them from the repository root with
``python -m tools.<name>`` (the Makefile targets do). They may import any part of the project;
nothing imports them.
"""
