"""The old path of ``autograder.term.formgrader`` (existing nbgrader and Jupyter server configurations)."""
from autograder.term.formgrader import (REFUSAL, HiddenTestsRemoved, PlainRefusal, SandboxedGradingOnly,  # noqa: F401
                                        _jupyter_server_extension_points, _load_jupyter_server_extension, plain_refusal)
