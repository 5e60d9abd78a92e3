// The episode timeline drawn as SVG (issue 17: a new tab must not load and start Plotly).
// Data: memuse_core.timeline.drawing (rows, x range, traces) plus `step` (the cursor).
// Recorded text arrives escaped for Plotly (entities, lines joined by <br>): it is decoded with a
// textarea and always set as text (textContent), never as HTML.
// Events: a click on a mark that stands for a step sends the trigger `pick` with that step.
const MIN_STEP_PX = 6; // narrower than this per step and the plot scrolls sideways
const TOP = 24; // room for the cursor's label above the plot
const AXIS = 40; // tick labels and the axis title under the plot
const PAD = 16; // room left and right of the plot for a mark's label at the first or last step
const decoder = document.createElement("textarea");

function plain(s) {
  decoder.innerHTML = s == null ? "" : String(s);
  return decoder.value;
}
function lines(s) {
  return String(s == null ? "" : s).split("<br>").map(plain);
}
function at(v, i) {
  return Array.isArray(v) ? v[i] : v;
}

function textWidth(ctx, s) {
  return ctx.measureText(s).width;
}

function draw(root, d, step, pick) {
  const old = root.querySelector(".memuse-tl-scroll");
  const scrollLeft = old ? old.scrollLeft : null;
  root.replaceChildren();
  const W = Math.max(320, root.clientWidth || 800);
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = "12px sans-serif";
  const labels = d.rows.map((r) => plain(r.label));
  const left = Math.min(W * 0.45, Math.ceil(Math.max(40, ...labels.map((s) => textWidth(ctx, s)))) + 14);
  const [x0, x1] = d.x_range;
  const span = x1 - x0;
  const viewW = W - left - 4;
  const plotW = Math.max(viewW - 2 * PAD, span * MIN_STEP_PX);
  const plotH = Math.max(60, d.height - 20 - 70);
  const [yBottom, yTop] = d.y_range;
  const X = (x) => PAD + ((x - x0) / span) * plotW;
  const Y = (y) => TOP + ((y - yTop) / (yBottom - yTop)) * plotH;
  const svgH = TOP + plotH + AXIS;

  const row = document.createElement("div");
  row.className = "memuse-tl-row";
  root.appendChild(row);
  const side = el("svg", { class: "memuse-tl-labels", width: left, height: svgH }, row);
  d.rows.forEach((r, i) => {
    const t = el("text", { x: left - 8, y: Y(r.y), "text-anchor": "end", "dominant-baseline": "central" }, side);
    t.textContent = labels[i];
  });
  const scroll = document.createElement("div");
  scroll.className = "memuse-tl-scroll";
  row.appendChild(scroll);
  const svg = el("svg", { class: "memuse-tl-plot", width: plotW + 2 * PAD, height: svgH }, scroll);

  const grid = el("g", { class: "grid" }, svg);
  d.rows.forEach((r) => el("line", { x1: PAD, x2: PAD + plotW, y1: Y(r.y), y2: Y(r.y) }, grid));
  const axis = el("g", { class: "axis" }, svg);
  const dt = Math.max(1, d.dtick || 1);
  for (let x = Math.ceil(x0 / dt) * dt; x <= x1; x += dt) {
    el("line", { x1: X(x), x2: X(x), y1: TOP, y2: TOP + plotH }, grid);
    const t = el("text", { x: X(x), y: TOP + plotH + 14, "text-anchor": "middle" }, axis);
    t.textContent = String(x);
  }
  const title = el("text", { x: PAD + Math.min(plotW, viewW) / 2, y: TOP + plotH + 32, "text-anchor": "middle" }, axis);
  title.textContent = d.x_title;

  d.traces.forEach((tr, ti) => {
    const g = el("g", { class: "trace " + tr.kind, "data-name": plain(tr.name) }, svg);
    if (tr.kind === "bar") {
      (tr.y || []).forEach((y, i) => {
        const h = (tr.thickness || 0.8) * (plotH / Math.abs(yBottom - yTop));
        el("rect", {
          class: "point",
          x: X(tr.base[i]),
          y: Y(y) - h / 2,
          width: Math.max(1, X(tr.base[i] + tr.length[i]) - X(tr.base[i])),
          height: h,
          fill: tr.color,
          "data-t": ti,
          "data-i": i,
        }, g);
      });
      return;
    }
    tr.x.forEach((x, i) => {
      if (x == null) return;
      const p = el("g", { class: "point", transform: `translate(${X(x)},${Y(tr.y[i])})`, "data-t": ti, "data-i": i }, g);
      if (tr.step) p.setAttribute("data-step", tr.step[i]);
      if (!tr.hover && !tr.step) p.setAttribute("pointer-events", "none");
      if (!tr.hover && tr.step) p.classList.add("ring");
      symbol(p, at(tr.symbol, i) || "circle", at(tr.size, i) || 6, at(tr.color, i), tr.line_color, tr.line_width);
      const label = tr.text ? tr.text[i] : "";
      if (label) {
        const t = el("text", { class: "textpoint", y: -(at(tr.size, i) || 6) / 2 - 4, "text-anchor": "middle", fill: tr.text_color || "currentColor", "font-size": tr.text_size || 9 }, p);
        t.textContent = plain(label);
      }
    });
  });

  if (step != null) {
    const c = el("g", { class: "cursor", transform: `translate(${X(step)},0)` }, svg);
    el("line", { y1: TOP - 6, y2: TOP + plotH, "stroke-dasharray": "2,3" }, c);
    el("path", { d: "M-6,2L6,2L0,12Z" }, c);
    const t = el("text", { x: 8, y: 11 }, c);
    t.textContent = "S" + step;
  }

  const legend = document.createElement("div");
  legend.className = "memuse-tl-legend";
  root.appendChild(legend);
  d.traces.forEach((tr) => {
    if (!tr.legend) return;
    const item = document.createElement("span");
    item.className = "legenditem";
    const key = el("svg", { width: 16, height: 14 });
    const g = el("g", { transform: "translate(8,7)" }, key);
    if (tr.kind === "bar") el("rect", { x: -7, y: -5, width: 14, height: 10, fill: tr.color }, g);
    else symbol(g, at(tr.symbol, 0) || "circle", Math.min(12, at(tr.size, 0) || 9), at(tr.color, 0), tr.line_color, tr.line_width);
    const name = document.createElement("span");
    name.className = "legendtext";
    name.textContent = plain(tr.name);
    item.append(key, name);
    legend.appendChild(item);
  });

  const tip = document.createElement("div");
  tip.className = "memuse-tl-hover";
  root.appendChild(tip);
  const showTip = (ev) => {
    const p = ev.target.closest && ev.target.closest(".point");
    const tr = p && d.traces[+p.getAttribute("data-t")];
    const h = tr && tr.hover && tr.hover[+p.getAttribute("data-i")];
    if (!h) {
      tip.style.display = "none";
      return;
    }
    tip.replaceChildren(...lines(h).map((s) => Object.assign(document.createElement("div"), { textContent: s })));
    const box = root.getBoundingClientRect();
    const x = ev.clientX - box.left;
    tip.style.display = "block";
    tip.style.top = `${ev.clientY - box.top + 14}px`;
    tip.style.left = `${Math.max(0, Math.min(x + 12, W - tip.offsetWidth - 4))}px`;
  };
  svg.addEventListener("mousemove", showTip);
  svg.addEventListener("mouseleave", () => (tip.style.display = "none"));
  svg.addEventListener("click", (ev) => {
    const p = ev.target.closest && ev.target.closest("[data-step]");
    if (p) pick(Number(p.getAttribute("data-step")));
  });
  if (scrollLeft != null) scroll.scrollLeft = scrollLeft;
  else if (step != null && plotW + 2 * PAD > viewW) scroll.scrollLeft = Math.max(0, X(step) - viewW / 2);
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  return mountResizing(parentElement, "memuse-tl", (root) => draw(root, data.drawing, data.step, (s) => setTriggerValue("pick", s)));
}
