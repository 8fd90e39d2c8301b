/* assay tables: sortable, filterable, paged tables over a local array (the one-file report)
   or a JSON endpoint (the viewer, for runs with many thousands of rows). Both sources take
   the same query: {offset, limit, sort, desc, q, <filter field>: value}. */
(function (global) {
  "use strict";

  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g, (c) => ESC[c]);
  const pct = (x) => (x == null ? "–" : (100 * x).toFixed(1) + "%");
  const num = (x, d) => (x == null ? "–" : Number(x).toFixed(d == null ? 3 : d));
  const secs = (x) => (x == null ? "–" : x < 1 ? (1000 * x).toFixed(1) + " ms" : x.toFixed(2) + " s");

  /** Does a row pass the filters? Arrays (tags) match when they contain the value. */
  function matches(row, filters, q, searchKeys) {
    for (const [field, value] of Object.entries(filters)) {
      if (value === "" || value == null) continue;
      const have = row[field];
      if (Array.isArray(have) ? !have.includes(value) : String(have) !== String(value)) return false;
    }
    if (q) {
      const needle = q.toLowerCase();
      if (!searchKeys.some((k) => String(row[k] == null ? "" : row[k]).toLowerCase().includes(needle))) return false;
    }
    return true;
  }

  function compare(a, b) {
    if (a == null && b == null) return 0;
    if (a == null) return 1;
    if (b == null) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  /** Rows held in the page. */
  function LocalSource(rows, searchKeys) {
    const keys = searchKeys || ["task_id"];
    return {
      query(q) {
        let out = rows.filter((r) => matches(r, q.filters || {}, q.q, keys));
        if (q.sort) {
          const sign = q.desc ? -1 : 1;
          out = out.slice().sort((a, b) => {
            const c = compare(a[q.sort], b[q.sort]);
            return c === 0 ? 0 : (a[q.sort] == null || b[q.sort] == null ? c : sign * c);
          });
        }
        return Promise.resolve({ rows: out.slice(q.offset, q.offset + q.limit), total: out.length });
      },
    };
  }

  /** Rows served page by page: GET url?offset=&limit=&sort=&desc=&q=&field=value. */
  function RemoteSource(url) {
    return {
      query(q) {
        const p = new URLSearchParams({ offset: q.offset, limit: q.limit });
        if (q.sort) { p.set("sort", q.sort); p.set("desc", q.desc ? "1" : "0"); }
        if (q.q) p.set("q", q.q);
        for (const [k, v] of Object.entries(q.filters || {})) if (v) p.set(k, v);
        return fetch(url + (url.includes("?") ? "&" : "?") + p.toString()).then((r) => {
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.json();
        });
      },
    };
  }

  class AssayTable {
    constructor(el, opts) {
      this.el = el;
      this.o = Object.assign({ pageSize: 50, filters: [], search: "search task id", sort: null, desc: false }, opts);
      this.state = { offset: 0, limit: this.o.pageSize, sort: this.o.sort, desc: this.o.desc, filters: {}, q: "" };
      for (const f of this.o.filters) this.state.filters[f.field] = f.value || "";
      this.seq = 0;
      this.build();
      this.refresh();
    }

    build() {
      const o = this.o;
      const selects = o.filters
        .map((f) => `<label class="small muted">${esc(f.label)} <select data-filter="${esc(f.field)}"><option value="">all</option>` +
          f.options.map((v) => `<option${v === f.value ? " selected" : ""}>${esc(v)}</option>`).join("") + "</select></label>")
        .join("");
      const search = o.search ? `<input type="search" placeholder="${esc(o.search)}" aria-label="${esc(o.search)}">` : "";
      const head = o.columns
        .map((c) => `<th class="${c.sortable === false ? "" : "sortable "}${c.numeric ? "num" : ""}" data-key="${esc(c.key)}">${esc(c.label)} <span class="arrow"></span></th>`)
        .join("");
      this.el.innerHTML = `<div class="toolbar">${search}${selects}<span class="count small muted"></span></div>` +
        `<div style="overflow:auto"><table class="data"><thead><tr>${head}</tr></thead><tbody></tbody></table></div>` +
        `<div class="pager"><button data-page="prev">‹ prev</button><span class="small muted range"></span><button data-page="next">next ›</button>` +
        `<label class="small muted">rows <select data-size>${[25, 50, 100, 200].map((n) => `<option${n === o.pageSize ? " selected" : ""}>${n}</option>`).join("")}</select></label></div>`;
      this.tbody = this.el.querySelector("tbody");
      const input = this.el.querySelector("input[type=search]");
      if (input) {
        let timer = null;
        input.addEventListener("input", () => {
          clearTimeout(timer);
          timer = setTimeout(() => { this.state.q = input.value.trim(); this.state.offset = 0; this.refresh(); }, 150);
        });
      }
      this.el.querySelectorAll("select[data-filter]").forEach((s) =>
        s.addEventListener("change", () => { this.state.filters[s.dataset.filter] = s.value; this.state.offset = 0; this.refresh(); }));
      this.el.querySelectorAll("th.sortable").forEach((th) =>
        th.addEventListener("click", () => {
          const key = th.dataset.key;
          this.state.desc = this.state.sort === key ? !this.state.desc : false;
          this.state.sort = key;
          this.state.offset = 0;
          this.refresh();
        }));
      this.el.querySelector('[data-page="prev"]').addEventListener("click", () => { this.state.offset = Math.max(0, this.state.offset - this.state.limit); this.refresh(); });
      this.el.querySelector('[data-page="next"]').addEventListener("click", () => { this.state.offset += this.state.limit; this.refresh(); });
      this.el.querySelector("select[data-size]").addEventListener("change", (e) => { this.state.limit = Number(e.target.value); this.state.offset = 0; this.refresh(); });
    }

    refresh() {
      const seq = ++this.seq;
      return this.o.source.query(this.state).then((res) => {
        if (seq !== this.seq) return;  // a newer query is on its way
        this.render(res);
      }).catch((err) => { this.tbody.innerHTML = `<tr><td colspan="${this.o.columns.length}">could not load rows: ${esc(err.message)}</td></tr>`; });
    }

    render(res) {
      const { rows, total } = res;
      const cols = this.o.columns;
      this.tbody.innerHTML = rows.length
        ? rows.map((r) => "<tr>" + cols.map((c) => `<td class="${c.numeric ? "num" : ""}">${c.render ? c.render(r) : esc(r[c.key])}</td>`).join("") + "</tr>").join("")
        : `<tr><td colspan="${cols.length}" class="muted">no rows match</td></tr>`;
      const s = this.state;
      const end = Math.min(total, s.offset + rows.length);
      this.el.querySelector(".range").textContent = total ? `${s.offset + 1}–${end} of ${total}` : "0 of 0";
      this.el.querySelector(".count").textContent = `${total} rows`;
      this.el.querySelector('[data-page="prev"]').disabled = s.offset === 0;
      this.el.querySelector('[data-page="next"]').disabled = end >= total;
      this.el.querySelectorAll("th.sortable").forEach((th) => {
        th.querySelector(".arrow").textContent = th.dataset.key === s.sort ? (s.desc ? "▼" : "▲") : "";
      });
      if (this.o.onRender) this.o.onRender(this.el);
    }
  }

  const outcomeBadge = (o) => `<span class="badge b-${esc(o)}">${esc(o)}</span>`;
  const rateBar = (x) => x == null ? "–" : `<span class="ratebar"><span style="width:${(100 * x).toFixed(0)}%"></span></span>${pct(x)}`;

  /** ✓ ✗ · per trial; a glyph links to the trial when ``href(task, index)`` gives a link. */
  function glyphs(task, rewards, href) {
    return '<span class="glyphs">' + rewards.map((r, i) => {
      const g = r === 1 ? "✓" : r === 0 ? "✗" : "·";
      const cls = r === 1 ? "g-pass" : r === 0 ? "g-fail" : "g-none";
      const title = `trial ${i}: ${r === 1 ? "pass" : r === 0 ? "fail" : "excluded"}`;
      const link = href ? href(task, i, r) : null;
      return link ? `<a class="${cls}" href="${esc(link)}" title="${title}">${g}</a>` : `<span class="${cls}" title="${title}">${g}</span>`;
    }).join("") + "</span>";
  }

  function taskColumns(opts) {
    const o = opts || {};
    const taskCell = (r) => (o.taskHref ? `<a href="${esc(o.taskHref(r.task_id))}">${esc(r.task_id)}</a>` : esc(r.task_id));
    const cols = [
      { key: "task_id", label: "task", render: taskCell },
      { key: "stratum", label: "stratum" },
      { key: "split", label: "split" },
      { key: "tags", label: "tags", sortable: false, render: (r) => r.tags.map((t) => `<span class="tag">${esc(t)}</span>`).join("") },
      { key: "difficulty", label: "diff.", numeric: true },
      { key: "success_rate", label: "success", numeric: true, render: (r) => rateBar(r.success_rate) },
      { key: "rewards", label: "trials", sortable: false, render: (r) => glyphs(r.task_id, r.rewards, o.trialHref) },
      { key: "outcome", label: "outcome", render: (r) => outcomeBadge(r.outcome) },
      { key: "failures", label: "failing graders", sortable: false, render: (r) => Object.entries(r.failures || {}).map(([g, n]) => `${esc(g)}×${n}`).join(", ") },
    ];
    return cols;
  }

  function trialColumns(opts) {
    const o = opts || {};
    const link = (r) => {
      const href = o.trialHref ? o.trialHref(r.task_id, r.trial, r.reward) : null;
      const text = `${esc(r.task_id)} #${r.trial}`;
      return href ? `<a href="${esc(href)}">${text}</a>` : text;
    };
    return [
      { key: "task_id", label: "trial", render: link },
      { key: "outcome", label: "outcome", render: (r) => outcomeBadge(r.reward === 1 ? "pass" : r.reward === 0 ? "fail" : "excluded") },
      { key: "termination", label: "termination" },
      { key: "category", label: "category", render: (r) => esc(r.category || "") },
      { key: "root_cause", label: "root cause", render: (r) => esc(r.root_cause || "") },
      { key: "failed", label: "failed graders", sortable: false, render: (r) => esc((r.failed || []).join(", ")) },
      { key: "latency_s", label: "latency", numeric: true, render: (r) => secs(r.latency_s) },
      { key: "cost_usd", label: "cost", numeric: true, render: (r) => (r.cost_usd == null ? "–" : "$" + num(r.cost_usd, 4)) },
    ];
  }

  function compareColumns(opts) {
    const o = opts || {};
    const taskCell = (r) => (o.pairHref ? `<a href="${esc(o.pairHref(r.task_id))}">${esc(r.task_id)}</a>` : esc(r.task_id));
    return [
      { key: "task_id", label: "task", render: taskCell },
      { key: "change", label: "change", render: (r) => outcomeBadge(r.change) },
      { key: "stratum", label: "stratum" },
      { key: "a_rewards", label: "A trials", sortable: false, render: (r) => glyphs(r.task_id, r.a_rewards, o.aHref) },
      { key: "b_rewards", label: "B trials", sortable: false, render: (r) => glyphs(r.task_id, r.b_rewards, o.bHref) },
      { key: "a_rate", label: "A", numeric: true, render: (r) => pct(r.a_rate) },
      { key: "b_rate", label: "B", numeric: true, render: (r) => pct(r.b_rate) },
      { key: "delta", label: "B − A", numeric: true, render: (r) => (r.delta == null ? "–" : (r.delta > 0 ? "+" : "") + (100 * r.delta).toFixed(0) + " pts") },
    ];
  }

  global.Assay = Object.assign(global.Assay || {}, {
    esc, pct, secs, AssayTable, LocalSource, RemoteSource, taskColumns, trialColumns, compareColumns, glyphs,
  });
})(window);
