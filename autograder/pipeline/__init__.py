"""The grading pipeline: small named steps, in the order a submission meets them (like
nbgrader's preprocessors, and using them where nbgrader has one).

    coursedir.py   where the course's notebooks live; nbgrader's configuration of the course
    cells.py       nbgrader's cell rules, once: ``cell_role``, the hidden-tests region, ``split_test_cell``
    submission.py  which students submitted; a private copy of their files; ``prepare`` -> ``Job``
    sanitize.py    read a notebook defensively, restore the instructor's cells, neutralise HTML
    markup.py      student markdown and HTML made inert (nh3, link schemes), checked on nbconvert's renderer
    executors.py   where jobs run: grader worker processes, threads, inline, or a Dask cluster
    execute.py     run the notebook in a sandboxed kernel (``NotebookRunner``), cell by cell
    scan.py        the student's source as the grader reads it: definitions, imports, tampering, forbidden calls
    decide.py      the hidden checks of a test cell, decided in the grader against the kernel
    outcome.py     one notebook's result (``RunResult``, verdicts with a ``Kind``) and a student's status from kinds
    score.py       points per cell, with a reason for each lost point (one notebook, a class)
    gradebook.py   nbgrader's gradebook: the assignment's cells, and each student's scores
    feedback.py    HTML feedback without the hidden tests
    late.py        the course's late-submission policy (an nbgrader plugin, chosen in nbgrader_config.py)
    extension.py   an extension for one student, its late penalty recomputed at once (``extension``)
    summary.py     the class summary of a grade report (reports/<id>-summary.md)
    lms.py         final scores as a Canvas or Moodle gradebook-import CSV (``export --lms``)

The steps reach student code only through the isolation layer's interface
(``autograder.isolation``) and the hidden checks only through ``autograder.checking``.
``autograder.selfcheck`` (one notebook) and ``autograder.classgrade`` (a class) run them.
"""
