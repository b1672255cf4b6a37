"""The grading steps, in the order a submission meets them (like nbgrader's preprocessors, and
using them where nbgrader has one): prepared, executed in a sandboxed kernel, decided, scored.
May import ``autograder.isolation`` (its interface only), ``autograder.checking``, ``autograder.notebooks``
and ``course``; never the term (``autograder.term``) or the commands above it.

    submission.py      which students submitted; a private copy of their files; ``prepare`` -> ``Job``
    executors.py       where jobs run: grader worker processes, threads, inline, or a Dask cluster
    grader_process.py  one submission in a grader process, under its budgets (``execute_bounded``)
    execute.py         run the notebook in a sandboxed kernel (``NotebookRunner``), cell by cell
    scan.py            the student's source as the grader reads it: definitions, imports, tampering, forbidden calls
    decide.py          the hidden checks of a test cell, decided in the grader against the kernel
    outcome.py         one notebook's result (``RunResult``, verdicts with a ``Kind``) and a student's status from kinds
    score.py           points per cell, with a reason for each lost point (one notebook, a class)
    summary.py         the class summary of a grade report (reports/<id>-summary.md)
    safe_text.py       student text made safe for a terminal line, a spreadsheet's cell (every CSV) and Markdown

``autograder.selfcheck`` (one notebook) and ``autograder.classgrade`` (a class) run them.
"""
