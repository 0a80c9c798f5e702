// Small DOM helpers: build elements without innerHTML (API text is never parsed as HTML),
// format the API's numbers, and show a problem's errors next to the controls they name.

export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

// "1234567.891" -> "1,234,567.89": grouping on the API's exact decimal string, no float rounding
// of the digits shown (cents are kept as sent; long fractions are cut to `maxFraction`).
export function groupDigits(text, maxFraction = 2) {
  if (text === null || text === undefined || text === "") return "";
  const raw = String(text);
  if (!/^-?\d+(\.\d+)?$/.test(raw)) return raw;
  const negative = raw.startsWith("-");
  const [whole, fraction = ""] = raw.replace("-", "").split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  let shownFraction = fraction.slice(0, Math.max(maxFraction, 0));
  if (shownFraction && /^0+$/.test(shownFraction) && maxFraction > 2) shownFraction = shownFraction.slice(0, 2);
  return (negative ? "-" : "") + grouped + (shownFraction ? `.${shownFraction}` : "");
}

export function usd(text, maxFraction = 2) {
  if (text === null || text === undefined) return "no price";
  const grouped = groupDigits(text, maxFraction);
  return grouped.startsWith("-") ? `-$${grouped.slice(1)}` : `$${grouped}`;
}

// Per-token prices keep up to 4 decimals (the API gives 1/10,000 of a cent per million tokens).
export const usdFine = (text) => usd(text, 4);

export function number(value, digits = 0) {
  if (value === null || value === undefined || Number.isNaN(Number(value))) return "n/a";
  return Number(value).toLocaleString("en-US", { maximumFractionDigits: digits });
}

export function percent(fraction, digits = 0) {
  if (fraction === null || fraction === undefined) return "n/a";
  return `${(Number(fraction) * 100).toFixed(digits)}%`;
}

// "violates_data_residency" -> "violates data residency"; units keep their capitals ("max USD per hour").
export const words = (name) =>
  String(name)
    .replaceAll("_", " ")
    .replace(/\b(usd|gb|gib|tflops|pue|ttft|tpot|id|npv)\b/g, (unit) => unit.toUpperCase());

// A count the API sends as an exact decimal ("8.000"), without trailing zeros ("8", "0.25").
export const count = (text) => (/^\d+\.\d+$/.test(String(text)) ? String(text).replace(/\.?0+$/, "") : String(text));

export function when(iso) {
  if (!iso) return "";
  return String(iso).replace("T", " ").replace(/(\.\d+)?(Z|\+00:00)$/, " UTC");
}

// --- errors next to fields ----------------------------------------------------------------------

export function clearErrors(form) {
  for (const message of form.querySelectorAll(".field-error")) message.remove();
  for (const control of form.querySelectorAll("[aria-invalid]")) {
    control.removeAttribute("aria-invalid");
    const described = (control.getAttribute("aria-describedby") || "")
      .split(" ")
      .filter((id) => id && !id.endsWith("-error"));
    if (described.length) control.setAttribute("aria-describedby", described.join(" "));
    else control.removeAttribute("aria-describedby");
  }
  const alert = form.querySelector(".form-alert");
  if (alert) {
    alert.hidden = true;
    alert.replaceChildren();
  }
}

// The enabled control (or group) a problem field names: "body.workload.inference.input_tokens"
// -> [name="workload.input_tokens"]; list items ("...allowed_accelerators.0") and nested parts
// fall back to the closest named control or group.
export function findTarget(form, field, { dropPrefixes = ["body", "query"], kinds = [] } = {}) {
  let parts = String(field || "").split(".");
  if (dropPrefixes.includes(parts[0])) parts = parts.slice(1);
  parts = parts.filter((part, index) => !(index > 0 && kinds.includes(part) && parts[index - 1] === "workload"));
  if (parts[0] === "workload" && parts[1] === "models") parts = ["workload", "model", ...parts.slice(2)];
  while (parts.length) {
    const name = parts.join(".");
    const escaped = CSS.escape(name);
    const control = [...form.querySelectorAll(`[name="${escaped}"]`)].find(
      (item) => !item.disabled && !item.closest("[hidden]"),
    );
    if (control) return control.type === "checkbox" || control.type === "radio" ? control.closest("fieldset") || control : control;
    const group = form.querySelector(`[data-field="${escaped}"]`);
    if (group && !group.closest("[hidden]")) return group;
    parts = parts.slice(0, -1);
  }
  return null;
}

let errorCount = 0;

// Show each `errors[]` entry of a problem next to its control; the rest in the form's alert.
// Answers the first control marked, so the caller can focus it.
export function showProblem(form, error, options = {}) {
  clearErrors(form);
  const problem = error.problem || { title: "Error", detail: String(error.message || error) };
  const entries = problem.errors && problem.errors.length ? problem.errors : [];
  const unplaced = [];
  let first = null;
  for (const entry of entries) {
    const target = findTarget(form, entry.field, options);
    if (!target) {
      unplaced.push(entry);
      continue;
    }
    errorCount += 1;
    const id = `problem-${errorCount}-error`;
    const message = h("p", { class: "field-error", id }, entry.reason);
    if (target.matches("fieldset, details, div[data-field]")) {
      if (target.tagName === "DETAILS") target.open = true;
      const legend = target.querySelector(":scope > legend, :scope > summary");
      (legend || target).after(message);
    } else {
      target.setAttribute("aria-invalid", "true");
      const described = target.getAttribute("aria-describedby");
      target.setAttribute("aria-describedby", described ? `${described} ${id}` : id);
      target.after(message);
      const details = target.closest("details");
      if (details) details.open = true;
    }
    if (!first) first = target;
  }
  if (!entries.length || unplaced.length) {
    const alert = form.querySelector(".form-alert");
    if (alert) {
      alert.hidden = false;
      alert.replaceChildren(
        h("strong", {}, `${problem.title || "Error"}${error.status ? ` (HTTP ${error.status})` : ""}: `),
        unplaced.length ? unplaced.map((e) => `${e.field ? `${e.field}: ` : ""}${e.reason}`).join("; ") : problem.detail || "",
      );
      if (!first) first = alert;
    }
  }
  if (first) {
    const focusable = first.matches("input, select, textarea, button") ? first : first.querySelector("input, select, textarea, button");
    (focusable || first).focus?.();
  }
  return first;
}

// A problem shown as a block (for answers that belong to no form).
export function problemBlock(error) {
  const problem = error.problem || { title: "Error", detail: String(error.message || error) };
  return h(
    "div",
    { class: "alert", role: "alert" },
    h("strong", {}, `${problem.title || "Error"}${error.status ? ` (HTTP ${error.status})` : ""}: `),
    problem.detail || "",
    error.status === 401 || error.status === 403 ? " Save an API key with the scope this needs under “API key” at the top of the page." : "",
  );
}

// Save bytes as a file through a temporary link.
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
