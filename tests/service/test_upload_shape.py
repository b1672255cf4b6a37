"""What the service's front door accepts as a notebook (``uploads.read_notebook``), in this process:
every notebook Jupyter or the course writes, and a 422 of its own for each way an upload is no
notebook, each found within a budget of work (cells, JSON values, depth) before the schema is
checked. The service runs the same function off its event loop (test_service.py sends some of
these over HTTP)."""
from __future__ import annotations

import copy
import json

import nbformat
import pytest

from autograder.service.uploads import MAX_DEPTH, MAX_NODES, Refused, read_notebook
from tests.support import ROOT
from tests.support.cheats import ASSIGNMENT
from tests.support.studentwork import perfect_submission


def _code(**fields) -> dict:
    cell = {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [], "execution_count": None, "id": "c1"}
    cell.update(fields)
    return cell


def _stream(**fields) -> dict:
    return {"output_type": "stream", "name": "stdout", "text": "1\n", **fields}


def _raw(cells: list, **top) -> bytes:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5, **top}).encode()


def _refusal(data: bytes) -> str:
    with pytest.raises(Refused) as refused:
        read_notebook(data, "mine.ipynb")
    assert refused.value.status == 422
    return refused.value.message


def test_every_notebook_the_course_and_jupyter_write_is_accepted():
    """The released notebooks, a student's answers with outputs, format 4.4 without cell ids, and
    format 4.5 with the ids left out (nbformat adds them, and so does the door)."""
    for path in sorted((ROOT / "exercises").glob("*/*.ipynb")):
        nb = read_notebook(path.read_bytes(), path.name)
        assert len(nb.cells) == len(nbformat.read(str(path), as_version=4).cells)
    answered = perfect_submission(ASSIGNMENT, ROOT)
    last = max(n for n, cell in enumerate(answered.cells) if cell.cell_type == "code")
    answered.cells[last].outputs = [nbformat.v4.new_output("stream", text="ok\n"),
                                    nbformat.v4.new_output("execute_result", data={"text/plain": "3"}, execution_count=1)]
    assert read_notebook(nbformat.writes(answered).encode(), "a.ipynb").cells[last].outputs[1].data["text/plain"] == "3"
    old = json.loads(nbformat.writes(answered))
    for cell in old["cells"]:
        del cell["id"]
    assert len(read_notebook(json.dumps({**old, "nbformat_minor": 4}).encode(), "old.ipynb").cells) == len(old["cells"])
    assert all(cell.get("id") for cell in read_notebook(json.dumps(old).encode(), "no-ids.ipynb").cells)


def _deep(levels: int) -> dict:
    top = inner = {}
    for _ in range(levels):
        inner["a"] = {}
        inner = inner["a"]
    return top


@pytest.mark.parametrize("data, says", [
    (_raw([_code(), {"cell_type": "weird", "metadata": {}, "source": ""}]), "cell 2 has cell_type 'weird'"),
    (_raw([_code(outputs=[_stream(), {"output_type": "zzz"}])]), "an output of cell 1 has output_type 'zzz'"),
    (_raw([_code(metadata=_deep(MAX_DEPTH))]), f"more than {MAX_DEPTH} levels deep"),
    (_raw([_code(outputs=[_stream()] * (MAX_NODES // 4))]), f"more than {MAX_NODES:,} JSON values"),
    (_raw([_code(outputs=[{"output_type": "stream", "name": "stdout"}])]), "a stream output of cell 1: stream must contain ['text']"),
    (_raw([_code(), _code(bogus=1)]), "cell 2: code_cell must not contain {'bogus'}"),
    (_raw([_code(execution_count="one")]), "cell 1: code_cell.execution_count must be integer or null"),
    (_raw([_code()], metadata=[]), "the notebook.metadata must be object"),
    (_raw([_code()], nbformat=3), "a notebook of format 3"),
], ids=["cell type", "output type", "depth", "values", "output field", "cell field", "field type", "notebook field", "format 3"])
def test_each_way_a_notebook_is_wrong_has_its_own_422(data, says):
    message = _refusal(data)
    assert says in message and "mine.ipynb" in message, message


def test_an_invalid_output_among_tens_of_thousands_is_found_at_once():
    """nbformat's validator looks for an invalid notebook's best error through every branch of its
    schema: over 100,000 outputs of an unknown type it worked 54 s of the service's thread, then
    accepted the notebook. Within the budget, 48,000 good outputs and a bad last one are refused,
    naming the output, by the compiled schema's first error."""
    cells = [_code(outputs=[_stream()] * 48_000 + [_stream(name=7)])]
    assert "a stream output of cell 1: stream.name must be string" in _refusal(_raw(cells))
    fixed = copy.deepcopy(cells)
    fixed[0]["outputs"][-1]["name"] = "stderr"
    assert len(read_notebook(_raw(fixed), "fixed.ipynb").cells[0].outputs) == 48_001
