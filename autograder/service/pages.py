"""The service's two pages, self-contained (their script is served by the service: no CDN, they
work offline). The token is typed once and kept in the browser's localStorage; every request
sends it as ``Authorization: Bearer``. Behind JupyterHub the pages need no token: every path is
under the service's prefix (``data-base``), the hub's cookie goes with each request, and a
browser without it is sent to the hub's login (``data-login``). Text from the server is put in
with ``textContent`` (a property message or a file name is never read as HTML)."""
from __future__ import annotations

from html import escape

_STYLE = """body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}.failed{color:#a00}.ok{color:#070}"""

def student_page(base: str = "/", login: str = "") -> str:
    """The student's page; ``base`` is the service's path (``/`` or the hub's prefix), ``login`` the
    hub's login address (empty without a hub)."""
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Submit a notebook</title>
<style>{_STYLE}</style><script src="{escape(base)}static/service.js" defer></script></head>
<body data-base="{escape(base)}" data-login="{escape(login)}">
<h1>Submit a notebook</h1>
<p><label>Your token: <input id="token" type="password" size="50" autocomplete="off"></label>
<button id="save-token">Use this token</button></p>
<div id="assignments"></div>
<p id="message" role="status"></p>
<h2>Your submissions</h2>
<p>Results appear here while grading runs: the points of each question and, for each one lost, the property that failed.</p>
<div id="submissions"></div>
</body></html>"""


def instructor_page(assignment: str, base: str = "/", login: str = "") -> str:
    a = escape(assignment)
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{a}: the class</title>
<style>{_STYLE}</style><script src="{escape(base)}static/service.js" defer></script></head>
<body data-assignment="{a}" data-base="{escape(base)}" data-login="{escape(login)}">
<h1>{a}: the class</h1>
<p><label>Instructor token: <input id="token" type="password" size="50" autocomplete="off"></label>
<button id="save-token">Use this token</button> <a id="csv" href="#">report as CSV</a>
<a id="similarity" href="#" hidden>similar submissions (a reason to look, never a grade)</a></p>
<p id="progress" role="status"></p>
<div id="chart"></div>
<h2>Properties the class fails</h2><div id="properties"></div>
<h2>Latest result of each student</h2><div id="students"></div>
<h2>Not submitted</h2><p id="missing"></p>
</body></html>"""


_SCRIPT = r"""
"use strict";
const $ = (id) => document.getElementById(id);
const token = () => localStorage.getItem("autograder-token") || "";
const base = () => document.body.dataset.base || "/";
async function api(path, opts = {}) {
  const headers = {...(opts.headers || {})};
  if (token()) { headers.Authorization = "Bearer " + token(); }  // else the hub's cookie, behind JupyterHub
  const r = await fetch(base() + path.replace(/^\//, ""), {...opts, headers});
  const login = document.body.dataset.login;
  if (r.status === 401 && login && !token()) { location.assign(login + "?next=" + encodeURIComponent(location.pathname)); }
  return r;
}
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
function table(head, rows) {
  const t = el("table"), tr = el("tr"); head.forEach((h) => tr.appendChild(el("th", h))); t.appendChild(tr);
  rows.forEach((r) => { const row = el("tr"); r.forEach((c) => row.appendChild(c instanceof Node ? c : el("td", c))); t.appendChild(row); });
  return t;
}
function td(node) { const c = el("td"); c.appendChild(node); return c; }
async function showError(r) { let d = r.statusText; try { d = (await r.json()).detail; } catch (e) {} $("message").textContent = r.status + ": " + d; }

async function loadAssignments() {
  const r = await api("/api/assignments"); if (!r.ok) { return showError(r); }
  const box = $("assignments"); box.replaceChildren();
  for (const a of (await r.json()).filter((a) => a.open)) {  // the released ones: the others refuse uploads
    const form = el("form"), input = el("input"), button = el("button", "Submit " + a.name);
    input.type = "file"; input.accept = ".ipynb"; input.name = "notebook"; input.dataset.assignment = a.name;
    form.append(el("strong", a.name + " "), input, button, el("span", a.deadline ? " (closes " + a.deadline + ")" : ""));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault(); if (!input.files.length) { $("message").textContent = "choose a notebook first"; return; }
      const body = new FormData(); body.append("notebook", input.files[0]);
      const s = await api("/api/assignments/" + encodeURIComponent(a.name) + "/submissions", {method: "POST", body});
      if (!s.ok) { return showError(s); }
      const j = await s.json(); $("message").textContent = "submission " + j.id + " queued" + (j.message ? ": " + j.message : ""); loadSubmissions();
    });
    box.appendChild(form);
  }
}
function questions(s) {
  const ul = el("ul");
  (s.questions || []).forEach((q) => {
    const li = el("li", q.name + ": " + (q.points === null ? "graded by hand" : q.points + "/" + q.max_points), q.failed.length ? "failed" : "ok");
    q.failed.forEach((f) => li.appendChild(el("div", f))); ul.appendChild(li);
  });
  if (s.problem) { ul.appendChild(el("li", s.problem, "failed")); }
  (s.notes || []).forEach((n) => ul.appendChild(el("li", "note: " + n)));
  return ul;
}
async function loadSubmissions() {
  const r = await api("/api/submissions"); if (!r.ok) { return showError(r); }
  const subs = (await r.json()).reverse();
  $("submissions").replaceChildren(table(["id", "assignment", "submitted", "status", "score", "questions"],
    subs.map((s) => [String(s.id), s.assignment, s.submitted_at, s.status, s.score === null ? "" : s.score + "/" + s.max_score, td(questions(s))])));
  if (subs.some((s) => s.status === "queued" || s.status === "running")) { setTimeout(loadSubmissions, 1500); }
}
async function loadReport(a) {
  const r = await api("/api/assignments/" + encodeURIComponent(a) + "/report"); if (!r.ok) { $("progress").textContent = r.status + " " + r.statusText; return; }
  const d = await r.json();
  $("progress").textContent = d.in_progress.queued + " queued, " + d.in_progress.running + " grading now, " + d.students.length + " graded";
  const svg = await api("/api/assignments/" + encodeURIComponent(a) + "/chart.svg");
  if (svg.ok) { const img = el("img"); img.alt = "students failing each property"; img.src = URL.createObjectURL(await svg.blob()); $("chart").replaceChildren(img); }
  $("properties").replaceChildren(table(["property", "students failing", "who"], d.properties.map((p) => [p.property, String(p.failing), p.students.join(", ")])));
  $("students").replaceChildren(table(["student", "status", "score", "failed", "problem"],
    d.students.map((s) => [s.student, s.status, s.score === null ? "" : s.score + "/" + s.max_score, s.failed.join(", "), s.problem])));
  $("missing").textContent = d.not_submitted.join(", ") || "everyone has submitted";
  $("csv").onclick = async (ev) => { ev.preventDefault(); const c = await api("/api/assignments/" + encodeURIComponent(a) + "/report?format=csv");
    const link = el("a"); link.href = URL.createObjectURL(await c.blob()); link.download = a + "-report.csv"; link.click(); };
  $("similarity").hidden = !d.similarity_report;  // once `python -m autograder similarity` has written it
  $("similarity").onclick = async (ev) => { ev.preventDefault(); const c = await api("/api/assignments/" + encodeURIComponent(a) + "/similarity.html");
    if (!c.ok) { return; } const link = el("a"); link.href = URL.createObjectURL(await c.blob()); link.download = a + "-similarity.html"; link.click(); };
  setTimeout(() => loadReport(a), 3000);
}
document.addEventListener("DOMContentLoaded", () => {
  $("token").value = token();
  $("save-token").addEventListener("click", () => { localStorage.setItem("autograder-token", $("token").value.trim()); location.reload(); });
  if (!token() && !document.body.dataset.login) { return; }
  const a = document.body.dataset.assignment;
  if (a) { loadReport(a); } else { loadAssignments(); loadSubmissions(); }
});
"""

STATIC = {"service.js": (_SCRIPT, "text/javascript")}
