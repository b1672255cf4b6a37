"""The old path of ``autograder.term.late`` (existing nbgrader configurations' ``plugin_class``)."""
from autograder.term.late import DailyLatePenalty  # noqa: F401
