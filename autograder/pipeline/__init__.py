"""Old import paths, kept so that existing nbgrader and Jupyter server configurations still load:
the grading steps are now in ``autograder.grading`` (and ``autograder.notebooks``), the
instructor's term in ``autograder.term``. Imports only ``autograder.term``; add nothing here.

    formgrader.py  -> autograder.term.formgrader  (nbgrader_config.py, jupyter_server_config.py)
    mathjax.py     -> autograder.term.mathjax     (nbgrader_config.py: ``FeedbackExporter``)
    late.py        -> autograder.term.late        (``c.AssignLatePenalties.plugin_class``)
"""
