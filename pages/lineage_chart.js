// A memory item's history graph drawn as SVG (issue 17: the lineage page must not load and start
// Plotly). Data: memuse_core.lineage.drawing (columns, nodes, edges, legend).
// Recorded text arrives plain (neutralised, not escaped) and is always set as text (textContent),
// never as HTML.
// Events: a click (or Enter / Space) on a node that opens something sends the trigger `pick` with
// the node's target, [kind, id, episode_id, step, namespace].
const TOP = 30; // the column titles
const BOTTOM = 10;
const SIDE = 10;

// A node's marker: open symbols grey-outlined, filled ones with a thin slate outline.
function mark(parent, name, size, color) {
  const open = /-open$/.test(name);
  return symbol(parent, name, size, color, open ? "#616161" : "#546e7a", open ? 1.5 : 1);
}

function draw(root, d, pick) {
  root.replaceChildren();
  const W = Math.max(480, root.clientWidth || 800);
  const H = d.height;
  const [x0, x1] = d.x_range;
  const X = (x) => SIDE + ((x - x0) / (x1 - x0)) * (W - 2 * SIDE);
  // y: 1 at the top, 0 at the bottom, with 2 % of room at each end (Plotly's range [-0.02, 1.02]).
  const Y = (y) => TOP + ((1.02 - y) / 1.04) * (H - TOP - BOTTOM);

  // A label beside a node is cut to the gap before the next column (the hover has it whole).
  const ctx = document.createElement("canvas").getContext("2d");
  ctx.font = "10px sans-serif";
  const gap = X(1) - X(0);
  const fit = (s, room) => {
    if (ctx.measureText(s).width <= room) return s;
    let k = s.length;
    while (k > 1 && ctx.measureText(s.slice(0, k) + "…").width > room) k--;
    return s.slice(0, k) + "…";
  };

  const legend = document.createElement("div");
  legend.className = "memuse-lin-legend";
  root.appendChild(legend);
  d.legend.forEach((it) => {
    const item = document.createElement("span");
    item.className = "legenditem";
    const key = el("svg", { width: 18, height: 14 });
    if (it.kind === "line") el("line", { x1: 1, x2: 17, y1: 7, y2: 7, stroke: it.color, "stroke-width": 2 }, key);
    else mark(el("g", { transform: "translate(9,7)" }, key), it.symbol, 11, it.color);
    const name = document.createElement("span");
    name.className = "legendtext";
    name.textContent = it.name;
    item.append(key, name);
    legend.appendChild(item);
  });

  const svg = el("svg", { class: "memuse-lin-plot", width: W, height: H, role: "img" }, root);
  const heads = el("g", { class: "columns" }, svg);
  d.columns.forEach((title, c) => {
    const t = el("text", { x: X(c), y: 16, "text-anchor": "middle" }, heads);
    t.textContent = title;
  });
  const edges = el("g", { class: "edges" }, svg);
  d.edges.forEach((e) => {
    let path = "";
    e.pairs.forEach(([a, b]) => {
      const p = d.nodes[a];
      const q = d.nodes[b];
      path += `M${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}L${X(q.x).toFixed(1)},${Y(q.y).toFixed(1)}`;
    });
    el("path", { class: "edge", d: path, stroke: e.color, "stroke-width": e.width, fill: "none", "data-legend": e.legend }, edges);
  });
  const nodes = el("g", { class: "nodes" }, svg);
  d.nodes.forEach((n, i) => {
    const g = el("g", { class: "node", transform: `translate(${X(n.x).toFixed(1)},${Y(n.y).toFixed(1)})`, "data-i": i, "data-legend": n.legend }, nodes);
    if (n.target) {
      g.classList.add("clickable");
      g.setAttribute("data-kind", n.target[0]);
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-label", n.hover[0] || n.label || n.target[0]);
    }
    mark(g, n.symbol, n.size, n.color);
    if (n.label) {
      const t = el("text", { class: "nodelabel", x: n.size / 2 + 4, "dominant-baseline": "central" }, g);
      t.textContent = fit(n.label, gap - n.size / 2 - 10);
    }
  });

  const tip = document.createElement("div");
  tip.className = "memuse-lin-hover";
  root.appendChild(tip);
  const nodeOf = (ev) => {
    const g = ev.target.closest && ev.target.closest(".node");
    return g ? d.nodes[+g.getAttribute("data-i")] : null;
  };
  svg.addEventListener("mousemove", (ev) => {
    const n = nodeOf(ev);
    if (!n) {
      tip.style.display = "none";
      return;
    }
    tip.replaceChildren(...n.hover.map((s) => Object.assign(document.createElement("div"), { textContent: s })));
    const box = root.getBoundingClientRect();
    tip.style.display = "block";
    tip.style.top = `${ev.clientY - box.top + 14}px`;
    tip.style.left = `${Math.max(0, Math.min(ev.clientX - box.left + 12, W - tip.offsetWidth - 4))}px`;
  });
  svg.addEventListener("mouseleave", () => (tip.style.display = "none"));
  const open = (ev) => {
    const n = nodeOf(ev);
    if (n && n.target) pick(n.target);
  };
  svg.addEventListener("click", open);
  svg.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      open(ev);
    }
  });
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  return mountResizing(parentElement, "memuse-lin", (root) => draw(root, data, (t) => setTriggerValue("pick", t)));
}
