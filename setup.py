"""Packaging hook (the metadata is in pyproject.toml): built wheels also carry the open
edition's hidden-test frames, so the self-check runs where there is no clone.

``course/_assignments/<id>/<id>.ipynb`` in the wheel is ``solutions/<id>/<id>.ipynb`` with
every answer cell replaced by the student's stub from ``exercises/`` (the instructor's
frame: locked cells, test cells with their hidden ``run_check`` lines, points; no answers);
``course/_assignments/<id>/release.ipynb`` is the released student notebook. Nothing is
written into the source tree; an editable install reads solutions/ and exercises/ directly.
A tree without solutions/ (the course edition) packages no frames.
"""
import json
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


def assignment_frames(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """{assignment: {file name: notebook JSON}} for every solutions/<id>/<id>.ipynb with a release."""
    frames = {}
    for source in sorted(root.glob("solutions/*/*.ipynb")):
        name = source.parent.name
        release = root / "exercises" / name / f"{name}.ipynb"
        if source.stem != name or not release.is_file():
            continue
        src, rel = json.loads(source.read_text(encoding="utf-8")), json.loads(release.read_text(encoding="utf-8"))
        stubs = {c["metadata"]["nbgrader"]["grade_id"]: c["source"]
                 for c in rel["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")}
        for cell in src["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("solution"):
                cell["source"] = stubs.get(meta.get("grade_id"), "")
                if cell["cell_type"] == "code":
                    cell["outputs"], cell["execution_count"] = [], None
        frames[name] = {f"{name}.ipynb": json.dumps(src, indent=1, ensure_ascii=False) + "\n",
                        "release.ipynb": json.dumps(rel, indent=1, ensure_ascii=False) + "\n"}
    return frames


class BuildWithFrames(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name, files in assignment_frames().items():
            folder = Path(self.build_lib) / "course" / "_assignments" / name
            folder.mkdir(parents=True, exist_ok=True)
            for filename, text in files.items():
                (folder / filename).write_text(text, encoding="utf-8")


setup(cmdclass={"build_py": BuildWithFrames})
