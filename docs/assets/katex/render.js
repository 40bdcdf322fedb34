// Typesets the formulas pymdownx.arithmatex marks (class "arithmatex") with the KaTeX files beside this one,
// on the first load and on each page material's instant navigation shows.
(function () {
  function render() {
    document.querySelectorAll(".arithmatex").forEach(function (el) {
      renderMathInElement(el, {
        delimiters: [{left: "\\(", right: "\\)", display: false}, {left: "\\[", right: "\\]", display: true}],
        throwOnError: false
      });
    });
  }
  if (typeof document$ !== "undefined") { document$.subscribe(render); } else { document.addEventListener("DOMContentLoaded", render); }
})();
