"""The grading service: students submit a notebook over HTTP and see, minutes later, what the
hidden checks think of it; the instructor watches the class.

``python -m autograder service`` (``make service``) starts it in the course root: FastAPI on
uvicorn (a well-kept ASGI stack whose multipart parser can be fed a counted stream, so an
oversized upload is refused while it arrives), and `--jobs` grading slots (threads) that take the durable queue
with the class grader's ``GradingRun``. Modules, by concern:

* ``store``      the tokens and the submission queue, tables in the gradebook's database;
* ``classlist``  what the service reads from nbgrader's own tables (students, due dates, extensions);
* ``uploads``    an upload checked and written durably where nbgrader expects it;
* ``worker``     its slots: each claims the next fair submission and grades it;
* ``app``        the HTTP API; ``report`` the instructor's picture; ``pages`` the two web pages;
* ``cli``        ``python -m autograder token ...`` and ``python -m autograder service``.

It may import everything below it (``classgrade``, ``autograder.term``, ``autograder.notebooks``,
``autograder.isolation``); only the command line and the tools import it.
"""
