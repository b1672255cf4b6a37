"""The instructor's term: what happens around grading and to its results, which no submission
passes through (nbgrader's gradebook, feedback, formgrader, late days, extensions, LMS export,
similar submissions).
May import ``autograder.grading``, ``autograder.notebooks`` and ``autograder.isolation`` (its interface);
never ``selfcheck``, ``classgrade``, the service or the command line.

    gradebook.py   nbgrader's gradebook: the assignment's cells, and each student's scores
    feedback.py    HTML feedback without the hidden tests
    formgrader.py  what formgrader's Generate Feedback and Autograde buttons do (a Jupyter server extension)
    mathjax.py     MathJax 3 for feedback pages and formgrader, without a CDN (``mathjax_templates/``, ``static/``)
    late.py        the course's late-submission policy (an nbgrader plugin, chosen in nbgrader_config.py)
    extension.py   an extension for one student, its late penalty recomputed at once (``extension``)
    lms.py         final scores as a Canvas or Moodle gradebook-import CSV (``export --lms``)
    migrate.py     the gradebook moved to another database (``migrate-gradebook``)
    similarity.py  submissions whose answer cells share code, with each other or the reference (``similarity``)
"""
