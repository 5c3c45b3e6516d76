// A "Copy" button for a value shown once (a new API token): [data-copy="#id"] copies that
// element's text. Without JavaScript or clipboard access the value stays there to select by hand.
(function () {
  "use strict";

  document.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-copy]");
    if (!button || !navigator.clipboard) return;
    const source = document.querySelector(button.dataset.copy);
    if (!source) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(
      () => {
        button.textContent = "Copied";
      },
      () => {
        button.textContent = "Select the token and copy it";
      },
    );
  });

  // The button only appears where it can work.
  if (navigator.clipboard) {
    document.querySelectorAll("button[data-copy][hidden]").forEach((button) => {
      button.hidden = false;
    });
  }
})();
