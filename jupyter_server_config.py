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
