// View "Catalog": accelerators, cloud offers and hosted-API prices from the list endpoints, with the
// filters and sort columns those endpoints document in the OpenAPI document (built from it, so a
// new filter shows up by itself), `as_of` / `catalog_version`, paging, and each row's source.
// `?table=cloud-offers&id=123` opens one row: the page links every price in a plan to it.

import { ApiError, get, openapi } from "./api.js";
import { clear, clearErrors, count, h, number, problemBlock, showProblem, usd, usdFine, when, words } from "./dom.js";

const PAGING = new Set(["limit", "offset", "sort", "as_of", "catalog_version"]);
const TABLES = {
  accelerators: {
    path: "/v1/accelerators",
    title: "Accelerators",
    key: (row) => row.id,
    columns: [
      ["id", (r) => r.id],
      ["name", (r) => r.name],
      ["vendor", (r) => r.vendor],
      ["kind", (r) => r.kind],
      ["memory GB", (r) => number(r.memory_gb, 1), "num"],
      ["bandwidth GB/s", (r) => number(r.memory_bandwidth_gb_s), "num"],
      ["BF16 TFLOPS", (r) => number(r.bf16_tflops), "num"],
      ["FP8 TFLOPS", (r) => number(r.fp8_tflops), "num"],
      ["TDP W", (r) => number(r.tdp_w), "num"],
      ["purchase price", (r) => (r.purchase_price_usd === null ? "unknown" : usd(r.purchase_price_usd, 0)), "num"],
      ["source", (r) => sourceCell(r.purchase_price_source ? `price: ${r.purchase_price_source}; specs: ${r.spec_source}` : `specs: ${r.spec_source}`)],
    ],
  },
  "cloud-offers": {
    path: "/v1/cloud-offers",
    title: "Cloud offers",
    key: (row) => row.id,
    columns: [
      ["id", (r) => r.id, "num"],
      ["provider", (r) => r.provider],
      ["instance", (r) => r.instance_type],
      ["region", (r) => r.region],
      ["accelerators", (r) => `${count(r.accelerator_count)} × ${r.accelerator_id || r.accelerator_name}`],
      ["on-demand $/h", (r) => priceOrNone(r.on_demand_usd_per_hour), "num"],
      ["spot $/h", (r) => priceOrNone(r.spot_usd_per_hour), "num"],
      ["on-demand $/accelerator-h", (r) => priceOrNone(r.on_demand_usd_per_accelerator_hour), "num"],
      ["flags", (r) => flags(r)],
      ["source", (r) => sourceCell(r.source, r.effective_from)],
    ],
  },
  "api-prices": {
    path: "/v1/api-prices",
    title: "API prices",
    key: (row) => row.id,
    columns: [
      ["id", (r) => r.id, "num"],
      ["provider", (r) => r.provider],
      ["hosted model", (r) => r.model_id],
      ["serves", (r) => r.catalog_model_id || ""],
      ["mode", (r) => r.mode || ""],
      ["input $/M tokens", (r) => priceOrNone(r.input_usd_per_million_tokens, true), "num"],
      ["cached input $/M", (r) => priceOrNone(r.cached_input_usd_per_million_tokens, true), "num"],
      ["output $/M tokens", (r) => priceOrNone(r.output_usd_per_million_tokens, true), "num"],
      ["context tokens", (r) => number(r.context_window_tokens), "num"],
      ["flags", (r) => flags(r)],
      ["source", (r) => sourceCell(r.source, r.effective_from)],
    ],
  },
};

let view = null;

function priceOrNone(value, fine = false) {
  if (value === null || value === undefined) return h("span", { class: "muted" }, "not listed");
  return fine ? usdFine(value) : usd(value, 4);
}

function flags(row) {
  const items = [];
  if (row.suspect) items.push(h("span", { class: "badge warn", title: row.suspect_reason || "" }, "suspect"));
  if (row.accelerator_only) items.push(h("span", { class: "badge", title: "GPU price without its host VM" }, "GPU only"));
  if (row.override) items.push(h("span", { class: "badge", title: row.override.reason }, "override"));
  if (row.deprecation_date) items.push(h("span", { class: "badge" }, `deprecated ${row.deprecation_date}`));
  return items;
}

// A source that is a web address is a link to it; a file name of the shipped data stays text.
function sourceText(source) {
  if (!source) return "no source";
  return /^https?:\/\/\S+$/.test(source) ? h("a", { href: source, rel: "noreferrer noopener", target: "_blank" }, source) : source;
}

function sourceCell(source, effectiveFrom) {
  return h("span", { class: "source-text" }, sourceText(source), effectiveFrom ? h("span", { class: "muted" }, ` · in force from ${when(effectiveFrom)}`) : null);
}

export async function startCatalog(section) {
  const doc = await openapi();
  view = {
    section,
    doc,
    form: section.querySelector("#catalog-form"),
    filters: section.querySelector("#catalog-filters"),
    table: section.querySelector("#catalog-table"),
    row: section.querySelector("#catalog-row"),
    status: section.querySelector("#catalog-status"),
  };
  const versions = await get("/v1/catalog/versions", { limit: 500 }).catch(() => ({ items: [] }));
  const versionSelect = view.form.querySelector("#cat-catalog_version");
  for (const version of versions.items) {
    versionSelect.append(h("option", { value: version.id }, `${version.id} · ${when(version.created_at)} · ${version.kind}`));
  }
  const tabs = [...section.querySelectorAll('[role="tab"]')];
  for (const tab of tabs) {
    tab.addEventListener("click", () => switchTable(tab.dataset.table));
    tab.addEventListener("keydown", (event) => {
      const index = tabs.indexOf(tab);
      const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: tabs.length - 1 }[event.key];
      if (next === undefined) return;
      event.preventDefault();
      const target = tabs[(next + tabs.length) % tabs.length];
      target.focus();
      switchTable(target.dataset.table);
    });
  }
  view.form.addEventListener("submit", (event) => {
    event.preventDefault();
    show({ offset: 0, push: true });
  });
  window.addEventListener("popstate", () => load(new URLSearchParams(window.location.search)));
  await load(new URLSearchParams(window.location.search));
}

function operationParameters(table) {
  const operation = view.doc.paths?.[TABLES[table].path]?.get;
  return operation?.parameters || [];
}

function filterControl(parameter) {
  const schema = parameter.schema || {};
  const variants = schema.anyOf ? schema.anyOf.filter((item) => item.type !== "null") : [schema];
  const main = variants[0] || {};
  const id = `cat-${parameter.name}`;
  let control;
  if (main.enum) {
    control = h("select", { id, name: parameter.name }, h("option", { value: "" }, "any"), main.enum.map((option) => h("option", { value: option }, words(option))));
  } else if (main.type === "boolean") {
    const fallback = schema.default === undefined ? "any" : `default (${schema.default ? "yes" : "no"})`;
    control = h("select", { id, name: parameter.name }, h("option", { value: "" }, fallback), h("option", { value: "true" }, "yes"), h("option", { value: "false" }, "no"));
  } else if (main.type === "number" || main.type === "integer" || main.format === "decimal" || /^(max|min)_/.test(parameter.name)) {
    control = h("input", { id, name: parameter.name, type: "number", step: "any", inputmode: "decimal" });
  } else {
    control = h("input", { id, name: parameter.name, type: "search", autocomplete: "off" });
  }
  const parts = [h("label", { for: id }, words(parameter.name)), control];
  if (parameter.description) {
    control.setAttribute("aria-describedby", `${id}-hint`);
    parts.push(h("span", { class: "hint", id: `${id}-hint` }, parameter.description.replaceAll("`", "")));
  }
  return h("div", { class: "field" }, parts);
}

function sortOptions(table) {
  const parameter = operationParameters(table).find((p) => p.name === "sort");
  const columns = (parameter?.description || "").split(":").pop().replace(/\.$/, "").split(",").map((c) => c.trim()).filter(Boolean);
  return [h("option", { value: "" }, "default order"), columns.flatMap((column) => [h("option", { value: column }, `${words(column)}, lowest first`), h("option", { value: `-${column}` }, `${words(column)}, highest first`)])];
}

function switchTable(table) {
  if (view.current === table) return;
  const params = new URLSearchParams({ table });
  window.history.pushState(null, "", `/catalog?${params}`);
  load(params);
}

async function load(params) {
  const table = TABLES[params.get("table")] ? params.get("table") : "accelerators";
  view.current = table;
  for (const tab of view.section.querySelectorAll('[role="tab"]')) {
    const selected = tab.dataset.table === table;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
  }
  view.section.querySelector("#catalog-panel").setAttribute("aria-labelledby", `tab-${table}`);
  const filters = operationParameters(table).filter((p) => p.in === "query" && !PAGING.has(p.name));
  clear(view.filters, filters.map(filterControl));
  clear(view.form.querySelector("#cat-sort"), sortOptions(table));
  view.form.querySelector("#cat-as_of").closest(".field").hidden = !operationParameters(table).some((p) => p.name === "as_of");
  view.form.querySelector("#cat-catalog_version").closest(".field").hidden = !operationParameters(table).some((p) => p.name === "catalog_version");
  for (const control of view.form.querySelectorAll("[name]")) {
    if (control.name === "limit") control.value = params.get("limit") || "50";
    else if (params.has(control.name)) control.value = params.get(control.name);
    else if (control.tagName === "SELECT") control.selectedIndex = 0;
    else control.value = "";
  }
  view.offset = Number(params.get("offset") || 0);
  const id = params.get("id");
  if (id) await showRow(table, id);
  else clear(view.row);
  await show({ offset: view.offset, push: false, highlight: id });
}

function query() {
  const values = {};
  for (const control of view.form.querySelectorAll("[name]")) {
    if (control.closest("[hidden]") || control.value === "") continue;
    values[control.name] = control.type === "datetime-local" ? `${control.value}Z` : control.value;
  }
  return values;
}

async function show({ offset, push, highlight }) {
  const table = view.current;
  const spec = TABLES[table];
  clearErrors(view.form);
  const values = { ...query(), offset };
  if (push) {
    const params = new URLSearchParams({ table, ...values });
    if (!offset) params.delete("offset");
    window.history.pushState(null, "", `/catalog?${params}`);
  }
  view.status.textContent = "Loading…";
  let page;
  try {
    page = await get(spec.path, values);
  } catch (error) {
    view.status.textContent = "";
    if (!(error instanceof ApiError)) throw error;
    clear(view.table);
    showProblem(view.form, error);
    return;
  }
  view.offset = offset;
  const first = page.total ? offset + 1 : 0;
  const last = offset + page.items.length;
  view.status.textContent = `${spec.title}: rows ${number(first)}–${number(last)} of ${number(page.total)}${page.catalog_version_id ? ` · catalog version ${page.catalog_version_id}` : ""}${page.as_of ? ` · as of ${when(page.as_of)}` : " · current prices"}`;
  const previous = h("button", { type: "button", class: "secondary", disabled: offset <= 0 }, "Previous page");
  const next = h("button", { type: "button", class: "secondary", disabled: last >= page.total }, "Next page");
  previous.addEventListener("click", () => show({ offset: Math.max(0, offset - page.limit), push: true }));
  next.addEventListener("click", () => show({ offset: offset + page.limit, push: true }));
  const rows = page.items.map((row) => {
    const key = String(spec.key(row));
    return h(
      "tr",
      { class: key === String(highlight) ? "highlight" : null, "data-key": key },
      spec.columns.map(([name, value, kind], index) => {
        const content = index === 0 ? h("a", { href: `/catalog?table=${table}&id=${encodeURIComponent(key)}`, onclick: (event) => openRow(event, table, key) }, value(row)) : value(row);
        // One child per cell, so a phone's two-column card keeps the value beside its name.
        const cell = h("span", {}, content);
        return index === 0 ? h("th", { scope: "row", class: kind, "data-label": name }, cell) : h("td", { class: kind, "data-label": name }, cell);
      }),
    );
  });
  clear(
    view.table,
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "data catalog-table stack-on-phone", id: `table-${table}` },
        h("caption", { class: "visually-hidden" }, spec.title),
        h("thead", {}, h("tr", {}, spec.columns.map(([name, , kind]) => h("th", { scope: "col", class: kind }, name)))),
        h("tbody", {}, rows),
      ),
    ),
    h("div", { class: "actions pager" }, previous, next),
  );
}

function openRow(event, table, key) {
  if (event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  const params = new URLSearchParams(window.location.search);
  params.set("table", table);
  params.set("id", key);
  window.history.pushState(null, "", `/catalog?${params}`);
  showRow(table, key).then(() => view.row.querySelector("h2")?.focus());
}

function displayValue(value) {
  if (value === null || value === undefined) return h("span", { class: "muted" }, "none");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

async function showRow(table, id) {
  const spec = TABLES[table];
  let row;
  try {
    row = await get(`${spec.path}/${encodeURIComponent(id)}`);
  } catch (error) {
    clear(view.row, problemBlock(error));
    return;
  }
  const sourceNames = ["source", "spec_source", "purchase_price_source", "fetched_at", "effective_from", "effective_to", "catalog_version_id"];
  const entries = Object.entries(row);
  const sources = entries.filter(([name]) => sourceNames.includes(name));
  const facts = entries.filter(([name]) => !sourceNames.includes(name));
  clear(
    view.row,
    h(
      "section",
      { class: "card row-card", "aria-labelledby": "row-title" },
      h("h2", { id: "row-title", tabindex: "-1" }, `${spec.title.replace(/s$/, "")} ${id}`),
      h("h3", {}, "Where it comes from"),
      h(
        "dl",
        { class: "facts source-facts" },
        sources.map(([name, value]) => [h("dt", {}, words(name)), h("dd", {}, typeof value === "string" && name.endsWith("source") ? sourceText(value) : displayValue(value))]),
      ),
      h("details", { open: true }, h("summary", {}, "Every field"), h("dl", { class: "facts" }, facts.map(([name, value]) => [h("dt", {}, words(name)), h("dd", {}, displayValue(value))]))),
      h("p", {}, h("a", { href: `${spec.path}/${encodeURIComponent(id)}` }, "This row as JSON")),
    ),
  );
}
