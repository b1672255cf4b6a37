// formgrader's page script (formgrade.js) speaks MathJax 2: it waits for
// MathJax.Hub.Startup.signal's "End" before it selects and scrolls to the first grade box.
// MathJax 3 has no Hub; this is the part formgrade.js uses, on MathJax 3's startup promise.
(function () {
    var mj = window.MathJax;
    if (!mj || mj.Hub) {
        return;
    }
    var typeset = function () {
        return mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    };
    mj.Hub = {
        Startup: {signal: {Interest: function (listener) {
            typeset().then(function () { listener("End"); });
        }}},
        Queue: function () {
            typeset().then(function () { return mj.typesetPromise ? mj.typesetPromise() : null; });
        },
        Config: function () {}
    };
})();
