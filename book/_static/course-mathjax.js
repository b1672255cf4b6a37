/* MathJax's speech-rule-engine (SRE: the explorer, speech and braille of MathJax's menu)
 * reads its rules ("mathmaps", one JSON file per locale) with XMLHttpRequest, which
 * browsers refuse for a page opened as a file (file://): MathJax then typesets nothing.
 * The book ships each map a second time as a script (_static/mathjax/sre/mathmaps/*.js,
 * written by book/_ext/coursebook.py at build time), and this file gives SRE a loader
 * that reads them through <script> tags, which work over file:// and http alike: one
 * path for both, no fetch. It runs after Sphinx's inline MathJax configuration and
 * before MathJax itself (deferred). MathJax's a11y/sre component sets its own loader
 * (window.SREfeature.custom, which SRE applies on every setup) when it loads; the
 * loader's checkReady hook for that component, which MathJax calls right after the
 * component's script has run and before anything that needs SRE starts, puts ours there.
 */
(function () {
  "use strict";
  const config = window.MathJax;
  if (!config || config.version) return; // no math on this page, or MathJax already running

  const root = document.documentElement.dataset.content_root || "./";
  const maps = (window.courseSreMaps = window.courseSreMaps || {});
  const pending = {};

  function loadMap(locale) {
    if (maps[locale]) return Promise.resolve(maps[locale]);
    if (!pending[locale]) {
      pending[locale] = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = new URL(root + "_static/mathjax/sre/mathmaps/" + locale + ".js", document.baseURI).href;
        script.onload = () => (maps[locale] ? resolve(maps[locale]) : reject(new Error("empty map " + locale)));
        script.onerror = () => reject(new Error("could not load the speech rules for " + locale));
        document.head.appendChild(script);
      });
    }
    return pending[locale];
  }

  config.loader = config.loader || {};
  const previous = config.loader["a11y/sre"] || {};
  config.loader["a11y/sre"] = Object.assign({}, previous, {
    checkReady() {
      window.SREfeature = Object.assign({}, window.SREfeature, { custom: loadMap });
      return previous.checkReady ? previous.checkReady() : Promise.resolve();
    },
  });
})();
