"""The old path of ``autograder.term.mathjax`` (existing nbgrader configurations: ``FeedbackExporter``)."""
from autograder.term.mathjax import FeedbackExporter, embedded_script, mathjax_dir, serve, served_loader  # noqa: F401
