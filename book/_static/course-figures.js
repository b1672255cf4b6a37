/* Interactive figures (course/figures.py): every <figure class="course-interactive"> holds
 * a Vega-Lite spec as JSON; this script draws it with the book's own vega-embed
 * (_static/vega/, loaded once per page before this file). Figures that appear later (a
 * cell re-run with "Run the code here") are drawn too. Each figure records its state in
 * data-state: "ready", or "failed" with the error in the console.
 */
(function () {
  "use strict";

  function draw(figure) {
    if (figure.dataset.state) return;
    const view = figure.querySelector(".course-vega");
    const source = figure.querySelector("script.course-vega-spec");
    if (!view || !source) return;
    figure.dataset.state = "drawing";
    if (typeof window.vegaEmbed !== "function") {
      figure.dataset.state = "failed";
      console.error("course-figures: vega-embed is not loaded");
      return;
    }
    let spec;
    try {
      spec = JSON.parse(source.textContent);
    } catch (error) {
      figure.dataset.state = "failed";
      console.error("course-figures: the figure's spec is not JSON", error);
      return;
    }
    window
      .vegaEmbed(view, spec, { actions: false, renderer: "svg" })
      .then((result) => {
        nameRadioGroups(figure);
        figure.courseView = result.view;
        figure.dataset.state = "ready";
      })
      .catch((error) => {
        figure.dataset.state = "failed";
        console.error("course-figures:", error);
      });
  }

  /* Vega labels each range and select by wrapping it in a <label>; a group of radio
   * buttons gets its name here, for screen readers (arrow keys move within the group). */
  function nameRadioGroups(figure) {
    figure.querySelectorAll(".vega-bind").forEach((bind) => {
      const name = bind.querySelector(".vega-bind-name");
      const radios = bind.querySelector(".vega-bind-radio");
      if (name && radios) {
        radios.setAttribute("role", "radiogroup");
        radios.setAttribute("aria-label", name.textContent.trim());
      }
    });
  }

  function drawAll(root) {
    root.querySelectorAll("figure.course-interactive").forEach(draw);
  }

  function start() {
    drawAll(document);
    new MutationObserver((changes) => {
      for (const change of changes) {
        change.addedNodes.forEach((node) => {
          if (node.nodeType === 1) drawAll(node.matches("figure.course-interactive") ? node.parentNode : node);
        });
      }
    }).observe(document.body, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
