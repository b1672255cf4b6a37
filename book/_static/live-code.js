/* Live code on a local Jupyter kernel (`make serve`), with thebe served from this book.
 *
 * Pages with code cells get a "Run the code here" button under their title. Pressing it
 * reads `_static/local-kernel.json` (written on the fly by `make serve`: the local
 * Jupyter server's address and token), loads the vendored thebe bundle from
 * `_static/thebe/`, turns every code cell into an editable cell with a run button,
 * and starts a kernel in the course's `book/` folder, so `from course import ...` works.
 * Nothing is loaded from the web. Opened from a plain file or a web host, the button
 * explains how to start the local server instead.
 */
(function () {
  "use strict";

  const root = document.documentElement.dataset.content_root || "./";
  const staticUrl = (path) => new URL(root + "_static/" + path, document.baseURI).href;

  function setStatus(bar, text, state) {
    const status = bar.querySelector(".live-code-status");
    status.textContent = text;
    if (state) document.body.dataset.liveCode = state;
  }

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = () => reject(new Error("could not load " + src));
      document.head.appendChild(script);
    });
  }

  function loadStyle(href) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    document.head.appendChild(link);
  }

  /* Mark each code cell's source and output for thebe; every cell gets an output area so
   * thebe pairs sources and outputs one to one. */
  function prepareCells() {
    const cells = Array.from(document.querySelectorAll("article .cell"));
    cells.forEach((cell) => {
      const pre = cell.querySelector(".cell_input pre");
      if (!pre) return;
      pre.setAttribute("data-executable", "true");
      pre.setAttribute("data-language", "python");
      let output = cell.querySelector(":scope > .cell_output");
      if (!output) {
        output = document.createElement("div");
        output.className = "cell_output docutils container";
        cell.appendChild(output);
      }
      output.setAttribute("data-output", "");
      cell.querySelectorAll("button.copybtn").forEach((b) => b.remove());
    });
    return cells.length;
  }

  async function activate(bar) {
    const button = bar.querySelector("button");
    button.disabled = true;
    let settings;
    try {
      const response = await fetch(staticUrl("local-kernel.json"), { cache: "no-store" });
      if (!response.ok) throw new Error(String(response.status));
      settings = await response.json();
    } catch (err) {
      setStatus(
        bar,
        "Live code needs the course's local server: run `make serve` in your copy of " +
          "the course and open the book at the address it prints.",
        "unavailable"
      );
      button.disabled = false;
      return;
    }
    setStatus(bar, "Loading thebe...", "loading");
    try {
      if (!window.thebe || !window.thebe.bootstrap) {
        loadStyle(staticUrl("thebe/thebe.css"));
        await loadScript(staticUrl("thebe/index.js"));
      }
    } catch (err) {
      setStatus(bar, "Could not load thebe from this book: " + err.message, "failed");
      button.disabled = false;
      return;
    }
    prepareCells();
    const page = (window.DOCUMENTATION_OPTIONS && DOCUMENTATION_OPTIONS.pagename) || "book/page";
    window.thebe.on("status", (name, data) => {
      if (data && data.message) setStatus(bar, "Kernel: " + data.status + " " + data.message);
    });
    setStatus(bar, "Starting a local kernel...", "starting");
    try {
      const result = await window.thebe.bootstrap({
        useBinder: false,
        useJupyterLite: false,
        requestKernel: true,
        mathjaxUrl: "",
        selector: "[data-executable]",
        outputSelector: "[data-output]",
        predefinedOutput: true,
        mountRestartButton: true,
        mountRestartAllButton: false,
        serverSettings: { baseUrl: settings.baseUrl, token: settings.token, appendToken: true },
        kernelOptions: {
          kernelName: settings.kernelName || "python3",
          path: (settings.pathPrefix || "") + page + ".ipynb",
        },
        codeMirrorConfig: { mode: "python", theme: "default", lineNumbers: false },
      });
      if (!result || !result.session) throw new Error("no kernel session");
      setStatus(bar, "Connected to a local kernel: press \u201crun\u201d under a cell.", "ready");
      button.remove();
    } catch (err) {
      setStatus(bar, "Could not start a local kernel: " + err, "failed");
    }
  }

  function mount() {
    if (!document.querySelector("article .cell .cell_input pre")) return;
    const title = document.querySelector("article.bd-article h1");
    if (!title) return;
    const bar = document.createElement("div");
    bar.className = "live-code-bar";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "btn btn-sm live-code-button";
    button.textContent = "\u25B6 Run the code here (local kernel)";
    button.title = "Run this page's code cells on a Jupyter kernel on your machine (make serve)";
    const status = document.createElement("span");
    status.className = "live-code-status";
    status.setAttribute("role", "status");
    bar.append(button, status);
    title.insertAdjacentElement("afterend", bar);
    button.addEventListener("click", () => activate(bar));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mount);
  else mount();
})();
