/* assay view: the "bar chart race" of ratings over time. Each frame is one period's
   cumulative ratings; bars slide to their new rank and width (CSS transitions). */
(function (global) {
  "use strict";
  const ROW = 34;

  function start(data) {
    const frames = data.frames;
    const el = document.getElementById("race");
    const label = document.getElementById("race-label");
    const period = document.getElementById("race-period");
    const slider = document.getElementById("race-slider");
    const play = document.getElementById("race-play");
    const color = {};
    data.models.forEach((m, i) => { color[m] = data.colors[i]; });
    const all = frames.flatMap((f) => Object.values(f.ratings));
    const lo = Math.min(...all), hi = Math.max(...all);
    const floor = lo - Math.max(20, (hi - lo) * 0.15);
    const span = Math.max(1, hi - floor);
    const models = Array.from(new Set(frames.flatMap((f) => Object.keys(f.ratings))));
    el.style.height = ROW * models.length + 8 + "px";
    const bars = {};
    for (const m of models) {
      const bar = document.createElement("div");
      bar.className = "bar";
      bar.dataset.model = m;
      bar.style.background = color[m] || "#64748b";
      bar.innerHTML = `<span class="name"></span><span class="val"></span>`;
      bar.querySelector(".name").textContent = m;
      el.appendChild(bar);
      bars[m] = bar;
    }
    let index = 0;
    let timer = null;

    function show(i) {
      index = Math.max(0, Math.min(frames.length - 1, i));
      const f = frames[index];
      const order = Object.keys(f.ratings).sort((a, b) => f.ratings[b] - f.ratings[a]);
      const width = el.clientWidth - 80;
      for (const m of models) {
        const bar = bars[m];
        const r = f.ratings[m];
        const rank = order.indexOf(m);
        if (r == null) { bar.style.opacity = "0"; continue; }
        bar.style.opacity = "1";
        bar.style.transform = `translateY(${rank * ROW}px)`;
        bar.style.width = Math.max(40, ((r - floor) / span) * width) + "px";
        bar.querySelector(".val").textContent = r.toFixed(0);
        bar.dataset.rank = String(rank + 1);
      }
      period.textContent = f.period_end;
      label.textContent = `${index + 1}/${frames.length} · ${f.n_battles} battles`;
      slider.value = String(index);
    }
    function pause() { clearInterval(timer); timer = null; play.textContent = "▶ play"; }
    function go() {
      if (index >= frames.length - 1) show(0);
      play.textContent = "❚❚ pause";
      timer = setInterval(() => { if (index >= frames.length - 1) pause(); else show(index + 1); }, 900);
    }
    play.addEventListener("click", () => (timer ? pause() : go()));
    document.getElementById("race-prev").addEventListener("click", () => { pause(); show(index - 1); });
    document.getElementById("race-next").addEventListener("click", () => { pause(); show(index + 1); });
    slider.addEventListener("input", () => { pause(); show(Number(slider.value)); });
    window.addEventListener("resize", () => show(index));
    show(0);
    global.AssayRace.state = () => ({ index, playing: timer !== null, frames: frames.length });
  }

  global.AssayRace = { start };
})(window);
