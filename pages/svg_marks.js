// SVG marks and mounting shared by the timeline and lineage components (pages/_svg_marks.py prepends this file
// to each component's module; one home for the marker shapes both draw).
const NS = "http://www.w3.org/2000/svg";

function el(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}

// One marker, centred on 0,0 (Plotly's symbol names; size is the diameter in px).
function symbol(parent, name, size, color, lineColor, lineWidth) {
  const r = size / 2;
  const open = /-open$/.test(name) || color === "rgba(0,0,0,0)";
  const fill = open ? "none" : color;
  const stroke = open ? (lineColor || color) : lineColor || "none";
  const sw = open ? Math.max(1.5, lineWidth || 0) : lineWidth || 0;
  const base = name.replace(/-open$/, "");
  const a = { fill: fill, stroke: stroke, "stroke-width": sw };
  if (base === "x") {
    const k = r * 0.8;
    return el("path", { d: `M${-k},${-k}L${k},${k}M${-k},${k}L${k},${-k}`, stroke: color, "stroke-width": Math.max(2, r / 2), fill: "none" }, parent);
  }
  if (base === "square") return el("rect", { ...a, x: -r * 0.85, y: -r * 0.85, width: r * 1.7, height: r * 1.7 }, parent);
  if (base === "diamond") return el("path", { ...a, d: `M0,${-r}L${r},0L0,${r}L${-r},0Z` }, parent);
  if (base === "triangle-down") return el("path", { ...a, d: `M${-r},${-r * 0.6}L${r},${-r * 0.6}L0,${r * 0.8}Z` }, parent);
  if (base === "star") {
    let d = "";
    for (let k = 0; k < 10; k++) {
      const rr = k % 2 ? r * 0.45 : r;
      const ang = (Math.PI / 5) * k - Math.PI / 2;
      d += (k ? "L" : "M") + (rr * Math.cos(ang)).toFixed(2) + "," + (rr * Math.sin(ang)).toFixed(2);
    }
    return el("path", { ...a, d: d + "Z" }, parent);
  }
  return el("circle", { ...a, r: r }, parent);
}

// The component's root element (made once per mount point) drawn by `render(root)` now and again
// whenever its width changes; returns the cleanup that stops watching.
function mountResizing(parentElement, className, render) {
  let root = parentElement.querySelector("." + className);
  if (!root) {
    root = document.createElement("div");
    root.className = className;
    parentElement.appendChild(root);
  }
  render(root);
  let width = root.clientWidth;
  const watch = new ResizeObserver(() => {
    if (Math.abs(root.clientWidth - width) > 2) {
      width = root.clientWidth;
      render(root);
    }
  });
  watch.observe(root);
  return () => watch.disconnect();
}
