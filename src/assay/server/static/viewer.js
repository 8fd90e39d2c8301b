/* assay view: the little JavaScript of the viewer's pages (tables, live updates). */
(function (global) {
  "use strict";
  const A = global.Assay;
  const enc = encodeURIComponent;

  /** Links inside a transcript that jump to a step or to the state diff. */
  function wireGoto(root) {
    root.querySelectorAll("[data-goto]").forEach((a) => a.addEventListener("click", (e) => {
      e.preventDefault();
      const article = a.closest(".transcript") || root;
      const target = a.dataset.goto === "diff" ? article.querySelector(".diff-panel") : article.querySelector(`[data-step="${a.dataset.goto.slice(5)}"]`);
      if (!target) return;
      target.scrollIntoView({ behavior: "smooth", block: "center" });
      target.classList.add("flash");
      setTimeout(() => target.classList.remove("flash"), 1500);
    }));
  }

  function runsPage() {
    const form = document.getElementById("pick-form");
    if (!form) return;
    const button = document.getElementById("compare-button");
    const boxes = Array.from(form.querySelectorAll("input.pick"));
    const picked = () => boxes.filter((b) => b.checked).map((b) => b.value);
    boxes.forEach((b) => b.addEventListener("change", () => { button.disabled = picked().length !== 2; }));
    form.addEventListener("submit", () => {
      const [b, a] = picked();  // the list is newest first: the older run is the baseline A
      form.querySelector("[name=a]").value = a;
      form.querySelector("[name=b]").value = b;
      boxes.forEach((x) => { x.disabled = true; });  // only a and b go into the URL
    });
  }

  function runPage(cfg) {
    const run = cfg.run_id;
    const taskHref = (task) => `/runs/${enc(run)}/tasks/${enc(task)}`;
    const trialHref = (task, i) => `/runs/${enc(run)}/tasks/${enc(task)}?trial=${i}`;
    const f = cfg.filters;
    const tasks = new A.AssayTable(document.getElementById("task-table"), {
      columns: A.taskColumns({ taskHref, trialHref }),
      source: A.RemoteSource(`/api/runs/${enc(run)}/tasks`),
      filters: [
        { field: "stratum", label: "stratum", options: f.stratum },
        { field: "split", label: "split", options: f.split },
        { field: "tags", label: "tag", options: f.tag },
        { field: "outcome", label: "outcome", options: ["pass", "flaky", "fail", "excluded"] },
      ],
      sort: "success_rate",
    });
    const trials = new A.AssayTable(document.getElementById("trial-table"), {
      columns: A.trialColumns({ trialHref }),
      source: A.RemoteSource(`/api/runs/${enc(run)}/trials`),
      filters: [{ field: "outcome", label: "outcome", options: ["pass", "fail", "excluded"], value: "" }],
      search: "search task, category, termination",
      sort: "reward",
      pageSize: 25,
    });
    if (cfg.status !== "running") return;
    // One poll at a time (the next starts when this one is done), and an overview is
    // applied only if no newer one was asked for since: responses that arrive out of
    // order never leave the page stale.
    let last = null;
    let asked = 0;
    const poll = () => {
      fetch(`/api/runs/${enc(run)}/status`).then((r) => r.json()).then((s) => {
        document.getElementById("run-progress").textContent = `${s.completed}/${s.planned} trials`;
        const badge = document.getElementById("run-status");
        badge.textContent = s.status;
        badge.className = "badge b-" + s.status;
        const version = `${s.status}/${s.completed}`;
        if (version !== last) {
          last = version;
          const mine = ++asked;
          fetch(`/runs/${enc(run)}/overview`).then((r) => r.text()).then((html) => {
            if (mine === asked) document.getElementById("overview").outerHTML = html;
          });
          tasks.refresh();
          trials.refresh();
        }
        if (s.status !== "running") {
          document.getElementById("live").hidden = true;
          return;
        }
        setTimeout(poll, cfg.poll_ms);
      }).catch(() => setTimeout(poll, cfg.poll_ms));
    };
    setTimeout(poll, cfg.poll_ms);
  }

  function comparePage(data) {
    const pairHref = (task) => `/compare/task?a=${enc(data.a)}&b=${enc(data.b)}&task=${enc(task)}`;
    const aHref = (task, i) => `/runs/${enc(data.a)}/tasks/${enc(task)}?trial=${i}`;
    const bHref = (task, i) => `/runs/${enc(data.b)}/tasks/${enc(task)}?trial=${i}`;
    new A.AssayTable(document.getElementById("compare-table"), {
      columns: A.compareColumns({ pairHref, aHref, bHref }),
      source: A.RemoteSource(`/api/compare/tasks?a=${enc(data.a)}&b=${enc(data.b)}`),
      filters: [
        { field: "change", label: "change", options: ["regressed", "improved", "changed", "same"] },
        { field: "stratum", label: "stratum", options: data.strata },
      ],
    });
  }

  global.AssayViewer = { wireGoto, runsPage, runPage, comparePage };
})(window);
