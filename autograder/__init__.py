"""The course's grading tool, in layers (each imports only from those above it in this list):

    isolation/     student code in a sandboxed kernel; knows nothing of courses or nbgrader
    checking.py    the hidden-test framework: named checks, contexts, comparisons
    pipeline/      the grading steps: sanitize -> execute -> decide -> score -> gradebook -> feedback
    selfcheck.py   one notebook through the pipeline (``check``)
    classgrade.py  a class through the pipeline, in parallel or on Dask (``grade``)
    cli.py         ``python -m autograder {release,check,grade,feedback}``
    termcli.py     the term's gradebook commands (``extension``, ...)

The checks themselves are course content, in the ``course`` package (``course/checks/``).

    python -m autograder release            # solutions/ -> exercises/ (nbgrader)
    python -m autograder check NB.ipynb     # grade one notebook with the hidden tests
"""
