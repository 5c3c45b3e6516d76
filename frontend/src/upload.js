// The upload form: drag and drop (files or folders), a real progress bar, "Queued" the moment the
// job is accepted, and no double submits. One document becomes a job; several, a folder or a ZIP
// archive become a batch (POST /batches), and the browser opens the batch's page. Without
// JavaScript the form posts normally and the server redirects.
(function () {
  "use strict";

  const form = document.querySelector("form[data-upload-form]");
  if (!form || !window.FormData || !window.XMLHttpRequest) return;

  const fileInput = document.getElementById("file");
  const folderInput = document.getElementById("folder");
  const fileCount = document.getElementById("file-count");
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

  function chosen() {
    return [...fileInput.files, ...(folderInput ? folderInput.files : [])];
  }

  function isBatch(files) {
    return files.length > 1 || (files.length === 1 && /\.zip$/i.test(files[0].name));
  }

  // Refuse an oversized file as soon as it is chosen, before any byte is sent.
  function checkChosen() {
    const files = chosen();
    const big = files.find((file) => maxBytes && file.size > maxBytes && !/\.zip$/i.test(file.name));
    if (big) showError(files.length > 1 ? `${big.name}: ${tooLarge}` : tooLarge);
    else errorBox.hidden = true;
    if (fileCount) {
      fileCount.hidden = files.length < 2;
      fileCount.textContent = `${files.length} files chosen: they will be one batch.`;
    }
  }
  fileInput.addEventListener("change", checkChosen);
  if (folderInput) folderInput.addEventListener("change", checkChosen);

  // A dropped folder arrives as a directory entry: read it (and its subfolders) into files.
  function readEntry(entry) {
    if (entry.isFile) return new Promise((resolve) => entry.file((file) => resolve([file]), () => resolve([])));
    if (!entry.isDirectory) return Promise.resolve([]);
    const reader = entry.createReader();
    const all = [];
    return new Promise((resolve) => {
      const next = () =>
        reader.readEntries(
          (entries) => {
            if (!entries.length) return Promise.all(all).then((lists) => resolve(lists.flat()));
            entries.forEach((child) => all.push(readEntry(child)));
            next();
          },
          () => resolve([]),
        );
      next();
    });
  }

  async function droppedFiles(transfer) {
    const entries = [...(transfer.items || [])]
      .map((item) => (item.webkitGetAsEntry ? item.webkitGetAsEntry() : null))
      .filter(Boolean);
    if (!entries.some((entry) => entry.isDirectory)) return [...transfer.files];
    const lists = await Promise.all(entries.map(readEntry));
    return lists.flat().filter((file) => !file.name.startsWith("."));
  }

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
    zone.addEventListener("drop", async (event) => {
      event.preventDefault();
      if (!event.dataTransfer) return;
      const files = await droppedFiles(event.dataTransfer);
      if (!files.length) return;
      const transfer = new DataTransfer();
      files.forEach((file) => transfer.items.add(file));
      fileInput.files = transfer.files;
      if (folderInput) folderInput.value = "";
      fileInput.dispatchEvent(new Event("change", { bubbles: true }));
    });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (busy) return;
    const files = chosen();
    if (!files.length) {
      showError("Choose a document first.");
      fileInput.focus();
      return;
    }
    const batch = isBatch(files);
    if (!batch && maxBytes && files[0].size > maxBytes) {
      showError(tooLarge);
      fileInput.focus();
      return;
    }
    busy = true;
    button.disabled = true;
    errorBox.hidden = true;
    setProgress(0, "Uploading… 0%");

    const request = new XMLHttpRequest();
    request.open("POST", batch ? zone.dataset.batchAction : form.dataset.apiAction);
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
        const refused = (body.rejected || []).map((item) => `${item.filename}: ${item.reason}`).join(" ");
        showError([body.detail || "The upload failed. Please try again.", refused].join(" ").trim());
        return;
      }
      if (body.batch_id) {
        setProgress(100, `Queued ${body.jobs.length} documents — opening the batch…`);
        window.location.assign(body.status_url);
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
      const card = `/jobs/${body.job_id}/status`;
      // htmx queues a second card's request behind the first and may settle them out of order:
      // only the latest upload's card is followed.
      submission.dataset.latestJob = body.job_id;
      window.htmx.ajax("GET", card, { target: "#submission", swap: "innerHTML" }).then(() => {
        if (submission.dataset.latestJob !== body.job_id) return;
        state.hidden = true;
        const status = submission.querySelector("[role=status]");
        if (status) {
          status.tabIndex = -1;
          status.focus();
        }
        // The new job's card follows its stream as the job page does (live.js), polling only
        // when the stream cannot be had.
        if (window.quireLive) {
          submission.dataset.liveStream = `/jobs/${body.job_id}/stream`;
          submission.dataset.livePoll = card;
          delete submission.dataset.live;
          submission.liveRetryMs = 0;
          window.quireLive.follow(submission);
        }
      });
      document.body.dispatchEvent(new CustomEvent("quire:job-submitted"));
    });
    request.addEventListener("error", () => {
      busy = false;
      button.disabled = false;
      showError("The upload could not reach the server. Check your connection and try again.");
    });
    // The chosen files whichever picker (or drop) they came from; an empty picker sends nothing.
    const data = new FormData(form);
    data.delete("file");
    files.forEach((file) => data.append("file", file, file.name));
    request.send(data);
  });
})();
