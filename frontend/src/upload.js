// The upload form: drag and drop, a real progress bar, "Queued" the moment the job is accepted,
// and no double submits. Without JavaScript the form posts normally and the server redirects.
(function () {
  "use strict";

  const form = document.querySelector("form[data-upload-form]");
  if (!form || !window.FormData || !window.XMLHttpRequest) return;

  const fileInput = form.querySelector('input[type="file"]');
  const button = form.querySelector('button[type="submit"]');
  const zone = form.querySelector("[data-dropzone]");
  const state = document.getElementById("upload-state");
  const progress = document.getElementById("upload-progress");
  const progressLabel = document.getElementById("upload-progress-label");
  const errorBox = document.getElementById("upload-error");
  const submission = document.getElementById("submission");
  let busy = false;

  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = false;
    state.hidden = true;
  }

  function setProgress(percent, text) {
    state.hidden = false;
    progress.value = percent;
    progressLabel.textContent = text;
  }

  if (zone) {
    ["dragenter", "dragover"].forEach((name) =>
      zone.addEventListener(name, (event) => {
        event.preventDefault();
        zone.classList.add("is-over");
      }),
    );
    ["dragleave", "drop"].forEach((name) =>
      zone.addEventListener(name, () => zone.classList.remove("is-over")),
    );
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      if (event.dataTransfer && event.dataTransfer.files.length) {
        fileInput.files = event.dataTransfer.files;
        fileInput.dispatchEvent(new Event("change", { bubbles: true }));
      }
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (busy) return;
    if (!fileInput.files.length) {
      showError("Choose a document first.");
      fileInput.focus();
      return;
    }
    busy = true;
    button.disabled = true;
    errorBox.hidden = true;
    setProgress(0, "Uploading… 0%");

    const request = new XMLHttpRequest();
    request.open("POST", form.dataset.apiAction);
    request.setRequestHeader("Accept", "application/json");
    const csrf = document.querySelector('meta[name="csrf-token"]');
    if (csrf) request.setRequestHeader("x-csrftoken", csrf.content);
    request.upload.addEventListener("progress", (progressEvent) => {
      if (progressEvent.lengthComputable) {
        const percent = Math.round((progressEvent.loaded / progressEvent.total) * 100);
        setProgress(percent, `Uploading… ${percent}%`);
      }
    });
    request.addEventListener("load", () => {
      busy = false;
      button.disabled = false;
      let body = {};
      try {
        body = JSON.parse(request.responseText);
      } catch (_) {
        body = {};
      }
      if (request.status !== 202) {
        showError(body.detail || "The upload failed. Please try again.");
        return;
      }
      setProgress(100, "Queued");
      form.reset();
      submission.innerHTML = "";
      const pending = document.createElement("p");
      pending.className = "status-line";
      pending.setAttribute("role", "status");
      pending.dataset.status = body.status;
      pending.dataset.jobId = body.job_id;
      pending.textContent = "Queued — waiting for a worker.";
      submission.appendChild(pending);
      window.htmx
        .ajax("GET", `/jobs/${body.job_id}/status`, { target: "#submission", swap: "innerHTML" })
        .then(() => {
          state.hidden = true;
        });
      document.body.dispatchEvent(new CustomEvent("quire:job-submitted"));
    });
    request.addEventListener("error", () => {
      busy = false;
      button.disabled = false;
      showError("The upload could not reach the server. Check your connection and try again.");
    });
    request.send(new FormData(form));
  });
})();
