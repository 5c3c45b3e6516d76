// Review beside the evidence: while a field's input has focus, its box on the page preview is
// highlighted. Delegated from the document, so job cards swapped in by htmx work too.
(function () {
  "use strict";

  function boxesOf(input) {
    const card = input.closest(".job-card") || document;
    return card.querySelectorAll(`rect[data-box="${CSS.escape(input.dataset.reviewField)}"]`);
  }

  document.addEventListener("focusin", (event) => {
    const input = event.target.closest && event.target.closest("[data-review-field]");
    if (input) boxesOf(input).forEach((box) => box.classList.add("active"));
  });
  document.addEventListener("focusout", (event) => {
    const input = event.target.closest && event.target.closest("[data-review-field]");
    if (input) boxesOf(input).forEach((box) => box.classList.remove("active"));
  });
})();
