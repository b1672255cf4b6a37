# Jupyter server configuration for the instructor's formgrader (nbgrader), read when the
# server is started from the course root with this file named on the command line:
#
#     jupyter lab --config=jupyter_server_config.py        (or: jupyter server --config=...)
#
# Jupyter reads no configuration from the current folder by itself; without --config the
# formgrader pages run without the policy below.

# Every /formgrader/ page is served with a Content-Security-Policy that allows formgrader's
# own scripts and nothing inline: no student script, event handler or javascript: link runs
# (autograder/formgrader_csp.py). The other extensions (nbgrader's among them) stay enabled.
c.ServerApp.jpserver_extensions.update({"autograder.formgrader_csp": True})

# This is the formgrader server: nbgrader_config.py then turns formgrader's Autograde button
# into a refusal that names the sandboxed command (`python -m autograder grade`), since the
# button would run students' code unsandboxed inside this server; the refusal reaches the
# button's box as its message, not as a Python traceback (autograder/term/formgrader.py).
c.ServerApp.jpserver_extensions.update({"autograder.term.formgrader": True})
import os  # noqa: E402

os.environ["AUTOGRADER_FORMGRADER"] = "1"
