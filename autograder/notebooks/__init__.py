"""The course's notebooks as nbgrader lays them out, and read safely: where they live, nbgrader's
cell rules (once), and a student's notebook read defensively with its markup made inert.
May import the isolation layer's interface (``autograder.isolation``, for the wire's limits) and nothing else of the project.

    coursedir.py   where the course's notebooks live; nbgrader's configuration of the course
    cells.py       nbgrader's cell rules, once: ``cell_role``, the hidden-tests region, ``split_test_cell``
    sanitize.py    read a notebook defensively, restore the instructor's cells, neutralise HTML
    markup.py      student markdown and HTML made inert (nh3, link schemes), checked on nbconvert's renderer
"""
