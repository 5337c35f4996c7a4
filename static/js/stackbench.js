// Progressive enhancement only: every page works without this file.
(function () {
  function drawDiagrams(root) {
    if (!window.mermaid) return;
    var nodes = (root || document).querySelectorAll("pre.mermaid:not([data-processed])");
    // A diagram that does not parse shows mermaid's own error drawing in its place; the page goes on.
    if (nodes.length) window.mermaid.run({ nodes: nodes, suppressErrors: true });
  }
  function copyLinks(root) {
    (root || document).querySelectorAll("[data-copy]").forEach(function (button) {
      if (button.dataset.bound) return;
      button.dataset.bound = "1";
      button.hidden = false;
      button.addEventListener("click", function () {
        var text = new URL(button.dataset.copy, window.location.href).href;
        navigator.clipboard.writeText(text).then(function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy link"; }, 1500);
        });
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (window.mermaid) window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
    drawDiagrams(document);
    copyLinks(document);
  });
  // A reply that reached the server empties its form (htmx swaps nothing for it).
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.target;
    if (form.matches && form.matches("form.reply") && event.detail.successful) form.reset();
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    drawDiagrams(event.target);
    copyLinks(event.target);
  });
})();
