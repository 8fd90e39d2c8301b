/* The one-file report: tabs, task/trial/comparison tables, and transcripts unpacked on
   demand from the gzip+base64 blob in #report-transcripts (nothing is fetched). */
(function () {
  "use strict";
  const A = window.Assay;
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const embedded = new Set(data.transcripts);
  const keyOf = (run, task, i) => `${run}/${task}/${i}`;
  const hrefOf = (run) => (task, i) => (embedded.has(keyOf(run, task, i)) ? "#t=" + encodeURIComponent(keyOf(run, task, i)) : null);

  // tabs ------------------------------------------------------------------------------
  const tabs = Array.from(document.querySelectorAll(".tabs button"));
  function showTab(name) {
    tabs.forEach((b) => b.classList.toggle("active", b.dataset.tab === name));
    document.querySelectorAll(".tabpanel").forEach((p) => { p.hidden = p.id !== "tab-" + name; });
  }
  tabs.forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
  document.querySelectorAll("[data-tab-link]").forEach((a) =>
    a.addEventListener("click", (e) => { e.preventDefault(); showTab(a.dataset.tabLink); }));

  // tables ------------------------------------------------------------------------------
  document.querySelectorAll(".task-table").forEach((el) => {
    const run = data.runs[Number(el.dataset.runIndex)];
    const f = run.filters;
    new A.AssayTable(el, {
      columns: A.taskColumns({ trialHref: hrefOf(run.run_id) }),
      source: A.LocalSource(run.tasks, ["task_id"]),
      filters: [
        { field: "stratum", label: "stratum", options: f.stratum },
        { field: "split", label: "split", options: f.split },
        { field: "tags", label: "tag", options: f.tag },
        { field: "outcome", label: "outcome", options: f.outcome },
      ],
      sort: "success_rate",
    });
  });
  document.querySelectorAll(".trial-table").forEach((el) => {
    const run = data.runs[Number(el.dataset.runIndex)];
    new A.AssayTable(el, {
      columns: A.trialColumns({ trialHref: hrefOf(run.run_id) }),
      source: A.LocalSource(run.failed_trials, ["task_id", "category", "termination"]),
      filters: [{ field: "outcome", label: "outcome", options: ["fail", "excluded"] }],
      search: "search task, category",
      pageSize: 25,
    });
  });
  document.querySelectorAll(".compare-table").forEach((el) => {
    const c = data.comparisons[Number(el.dataset.cmpIndex)];
    new A.AssayTable(el, {
      columns: A.compareColumns({ aHref: hrefOf(c.a), bHref: hrefOf(c.b) }),
      source: A.LocalSource(c.tasks, ["task_id"]),
      filters: [{ field: "change", label: "change", options: ["regressed", "improved", "changed", "same"] }],
    });
  });

  // transcripts ---------------------------------------------------------------------------
  let store = null;
  function transcripts() {
    if (store) return store;
    const blob = document.getElementById("report-transcripts").textContent.trim();
    if (!blob) return (store = Promise.resolve({}));
    if (typeof DecompressionStream === "undefined") {
      return (store = Promise.reject(new Error("this browser cannot unpack the transcripts (no DecompressionStream)")));
    }
    const bytes = Uint8Array.from(atob(blob), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    store = new Response(stream).text().then((text) => JSON.parse(text));
    return store;
  }

  const overlay = document.getElementById("tx-overlay");
  const body = document.getElementById("tx-body");
  function wireGoto(root) {
    root.querySelectorAll("[data-goto]").forEach((a) => a.addEventListener("click", (e) => {
      e.preventDefault();
      const target = a.dataset.goto === "diff" ? root.querySelector(".diff-panel") : root.querySelector(`[data-step="${a.dataset.goto.slice(5)}"]`);
      if (!target) return;
      target.scrollIntoView({ behavior: "smooth", block: "center" });
      target.classList.add("flash");
      setTimeout(() => target.classList.remove("flash"), 1500);
    }));
  }
  function openTranscript(key) {
    overlay.classList.add("open");
    body.innerHTML = '<div class="muted">loading…</div>';
    transcripts().then((all) => {
      body.innerHTML = all[key] || `<div class="note">No transcript embedded for ${A.esc(key)}.</div>`;
      wireGoto(body);
    }).catch((err) => { body.innerHTML = `<div class="note">${A.esc(err.message)}</div>`; });
  }
  function closeTranscript() {
    overlay.classList.remove("open");
    if (location.hash.startsWith("#t=")) history.replaceState(null, "", location.pathname + location.search);
  }
  function route() {
    if (location.hash.startsWith("#t=")) openTranscript(decodeURIComponent(location.hash.slice(3)));
    else overlay.classList.remove("open");
  }
  document.getElementById("tx-close").addEventListener("click", closeTranscript);
  overlay.addEventListener("click", (e) => { if (e.target === overlay) closeTranscript(); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeTranscript(); });
  window.addEventListener("hashchange", route);
  route();
})();
