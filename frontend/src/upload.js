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
  const workflow = form.querySelector("select[name=workflow]");
  const maxBytes = Number(form.dataset.maxBytes || 0);
  const tooLarge = `This file is larger than the ${form.dataset.maxLabel} limit. Choose a smaller file.`;
  const remembered = "quire:last-workflow";
  let busy = false;

  // The next upload starts with the workflow chosen last time (an invoice after an invoice).
  try {
    const last = window.localStorage.getItem(remembered);
    if (last && workflow.querySelector(`option[value="${CSS.escape(last)}"]`)) workflow.value = last;
  } catch (_) {
    /* storage may be off: the server's choice stands */
  }
  workflow.addEventListener("change", () => {
    try {
      window.localStorage.setItem(remembered, workflow.value);
    } catch (_) {
      /* nothing to remember with */
    }
  });

  // Refuse an oversized file as soon as it is chosen, before any byte is sent.
  fileInput.addEventListener("change", () => {
    const file = fileInput.files[0];
    if (file && maxBytes && file.size > maxBytes) showError(tooLarge);
    else errorBox.hidden = true;
  });

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
    if (maxBytes && fileInput.files[0].size > maxBytes) {
      showError(tooLarge);
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
      if (request.status === 413) {
        showError(tooLarge);
        return;
      }
      if (request.status !== 202) {
        showError(body.detail || "The upload failed. Please try again.");
        return;
      }
      setProgress(100, "Queued");
      // Only the file is cleared: the workflow stays for the next document.
      fileInput.value = "";
      try {
        window.localStorage.setItem(remembered, workflow.value);
      } catch (_) {
        /* nothing to remember with */
      }
      submission.innerHTML = "";
      const pending = document.createElement("p");
      pending.className = "status-line";
      pending.setAttribute("role", "status");
      pending.dataset.status = body.status;
      pending.dataset.jobId = body.job_id;
      pending.tabIndex = -1;
      pending.textContent = "Queued — waiting for a worker.";
      submission.appendChild(pending);
      // Keyboard and screen-reader users land on the new job's status, not back at the top.
      pending.focus();
      window.htmx
        .ajax("GET", `/jobs/${body.job_id}/status`, { target: "#submission", swap: "innerHTML" })
        .then(() => {
          state.hidden = true;
          const status = submission.querySelector("[role=status]");
          if (status) {
            status.tabIndex = -1;
            status.focus();
          }
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
