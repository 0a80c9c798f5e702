// The break-even chart of a recommendation, drawn as inline SVG from the curve points the API
// answered (`break_even.points`): each compared plan's USD per month against the volume, on
// logarithmic axes, with today's volume and the crossovers marked. The numbers are the API's; this
// only draws them. (Scenario charts are the API's own SVGs, see scenarios.js.)

const SVG = "http://www.w3.org/2000/svg";
export const PLAN_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"];
const DASHES = ["", "6 3", "2 3", "8 3 2 3", "", "6 3", "2 3", "8 3 2 3"];

function svg(tag, attributes = {}, text) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

export function compact(value) {
  const abs = Math.abs(value);
  const units = [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "k"]];
  for (const [size, suffix] of units) {
    if (abs >= size) return `${Number((value / size).toPrecision(3))}${suffix}`;
  }
  return `${Number(value.toPrecision(3))}`;
}

function logTicks(low, high, steps = [1, 2, 5]) {
  const ticks = [];
  for (let power = Math.floor(Math.log10(low)); power <= Math.ceil(Math.log10(high)); power += 1) {
    for (const step of steps) {
      const value = step * 10 ** power;
      if (value >= low * 0.999 && value <= high * 1.001) ticks.push(value);
    }
  }
  return ticks.length >= 2 ? ticks : [low, high];
}

// Answers an <svg> element; `labelId` names the element that describes it.
// `width` is the room it gets in CSS pixels: text stays 12 px, so a phone gets fewer ticks, not smaller type.
export function breakEvenChart(breakEven, { title, unitLabel, width: room = 720 }) {
  const width = Math.max(300, Math.min(Math.round(room), 900));
  const narrow = width < 560;
  const height = narrow ? 280 : 360;
  const margin = { left: 52, right: 12, top: 28, bottom: 48 };
  const points = breakEven.points.filter((p) => p.volume > 0);
  const series = breakEven.compared.map((label) =>
    points
      .map((p) => [p.volume, Number(p.usd_per_month[label])])
      .filter(([, usd]) => Number.isFinite(usd) && usd > 0),
  );
  const volumes = points.map((p) => p.volume);
  const costs = series.flat().map(([, usd]) => usd);
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img" });
  chart.append(svg("title", {}, title));
  chart.append(svg("desc", {}, breakEven.summary || ""));
  if (!volumes.length || !costs.length) return chart;
  const [xLow, xHigh] = [Math.min(...volumes), Math.max(...volumes)];
  const [yLow, yHigh] = [Math.min(...costs) / 1.15, Math.max(...costs) * 1.15];
  const x = (v) => margin.left + ((Math.log10(v) - Math.log10(xLow)) / (Math.log10(xHigh) - Math.log10(xLow) || 1)) * (width - margin.left - margin.right);
  const y = (v) => height - margin.bottom - ((Math.log10(v) - Math.log10(yLow)) / (Math.log10(yHigh) - Math.log10(yLow) || 1)) * (height - margin.top - margin.bottom);

  const grid = svg("g", { class: "grid" });
  for (const tick of logTicks(yLow, yHigh, narrow ? [1, 3] : [1, 2, 5])) {
    grid.append(svg("line", { x1: margin.left, x2: width - margin.right, y1: y(tick), y2: y(tick) }));
    grid.append(svg("text", { x: margin.left - 6, y: y(tick) + 4, "text-anchor": "end" }, `$${compact(tick)}`));
  }
  for (const tick of logTicks(xLow, xHigh, narrow ? [1] : [1, 2, 5])) {
    grid.append(svg("line", { x1: x(tick), x2: x(tick), y1: margin.top, y2: height - margin.bottom }));
    grid.append(svg("text", { x: x(tick), y: height - margin.bottom + 16, "text-anchor": "middle" }, compact(tick)));
  }
  chart.append(grid);
  chart.append(svg("text", { x: (width + margin.left) / 2, y: height - 8, "text-anchor": "middle", class: "axis-label" }, unitLabel));
  chart.append(svg("text", { x: 12, y: margin.top - 10, class: "axis-label" }, "USD per month (log scale)"));

  if (breakEven.current_volume > 0) {
    const today = x(breakEven.current_volume);
    chart.append(svg("line", { x1: today, x2: today, y1: margin.top, y2: height - margin.bottom, class: "today" }));
    chart.append(svg("text", { x: today + 4, y: margin.top + 12, class: "today-label" }, "today"));
  }
  series.forEach((line, index) => {
    if (!line.length) return;
    const path = line.map(([v, usd], i) => `${i ? "L" : "M"}${x(v).toFixed(1)},${y(usd).toFixed(1)}`).join(" ");
    chart.append(svg("path", { d: path, fill: "none", stroke: PLAN_COLOURS[index % PLAN_COLOURS.length], "stroke-width": 2.5, "stroke-dasharray": DASHES[index % DASHES.length] }));
  });
  for (const crossover of breakEven.crossovers || []) {
    chart.append(svg("line", { x1: x(crossover.volume), x2: x(crossover.volume), y1: margin.top, y2: height - margin.bottom, class: "crossover" }));
  }
  return chart;
}
