// Show every <time datetime="..."> in the viewer's own time zone, also after htmx swaps.
(function () {
  "use strict";
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

  function localize(root) {
    root.querySelectorAll("time[datetime]").forEach((element) => {
      const when = new Date(element.getAttribute("datetime"));
      if (!Number.isNaN(when.getTime())) {
        element.textContent = format.format(when);
        element.title = element.getAttribute("datetime");
      }
    });
  }

  document.addEventListener("DOMContentLoaded", () => localize(document));
  document.addEventListener("htmx:afterSwap", (event) => localize(event.detail.elt.parentNode || document));
  // Fragments a live stream swaps in (htmx.swap) announce themselves with htmx:load.
  document.addEventListener("htmx:load", (event) => localize(event.detail.elt));
})();
