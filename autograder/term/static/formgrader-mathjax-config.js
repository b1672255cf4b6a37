// MathJax 3 configuration for formgrader's pages (loaded before MathJax itself):
// $...$ and \(...\) inline, $$...$$ and \[...\] displayed, as nbconvert's MathJax 2 setup had.
window.MathJax = {
    tex: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
          processEscapes: true, processEnvironments: true, tags: 'ams'},
    options: {ignoreHtmlClass: 'tex2jax_ignore', processHtmlClass: 'tex2jax_process'}
};
