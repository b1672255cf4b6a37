"""The course's grading tool, in layers (each imports only from those above it in this list;
``tests/test_layout.py`` checks it):

    isolation/     student code in a sandboxed kernel (sandbox/, guard/, kernels/); knows nothing of courses or nbgrader
    checking/      the hidden-test framework: named checks, contexts, comparisons
    notebooks/     the course's notebooks as nbgrader lays them out, and a student's notebook read safely
    grading/       the grading steps: submission -> execute -> decide -> score
    term/          the instructor's term: gradebook, feedback, formgrader, late days, extensions, LMS export
    pipeline/      old import paths only, kept for nbgrader and Jupyter server configurations
    selfcheck.py   one notebook through the grading steps (``check``)
    classgrade.py  a class through the grading steps, in parallel or on Dask (``grade``)
    service/       the grading service (``service``, ``token``)
    cli.py         ``python -m autograder {release,check,grade,feedback,...}``
    termcli.py     the term's gradebook commands (``extension``, ...)

The checks themselves are course content, in the ``course`` package (``course/checks/``).

    python -m autograder release            # solutions/ -> exercises/ (nbgrader)
    python -m autograder check NB.ipynb     # grade one notebook with the hidden tests
"""
