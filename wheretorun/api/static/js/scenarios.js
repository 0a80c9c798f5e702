// View "Compare scenarios": saved scenarios (GET /v1/scenarios), their versions, an evaluation with
// Monte Carlo, sensitivity and break-even (POST /v1/scenarios/{id}/evaluate), the API's own charts
// (POST /v1/scenarios/{id}/charts/{chart}, SVG drawn by wheretorun/reports/charts.py) and the
// cash-flow table as CSV or XLSX. Saving a new version sends If-Match with the version it edits.

import { ApiError, get, idempotencyKey, openapi, post, request, requestSchema } from "./api.js";
import { clear, clearErrors, h, number, percent, problemBlock, saveBlob, showProblem, usd, when, words } from "./dom.js";

const CHARTS = [
  ["cost_stack", "Cumulative cost by category, one panel per plan"],
  ["break_even", "Break-even between two plans"],
  ["tornado", "Sensitivity of one plan's cost (tornado)"],
  ["monte_carlo", "Monte Carlo distribution of each plan's cost"],
];

let view = null;

export async function startScenarios(section) {
  view = {
    section,
    items: section.querySelector("#scenario-items"),
    listStatus: section.querySelector("#scenario-list-status"),
    detail: section.querySelector("#scenario-detail"),
    chartUrls: [],
  };
  section.querySelector("#scenario-search").addEventListener("submit", (event) => {
    event.preventDefault();
    loadList();
  });
  section.querySelector("#scenario-new").addEventListener("click", createFromExample);
  section.querySelector("#scenario-compare").addEventListener("submit", (event) => {
    event.preventDefault();
    compareTicked(event.target);
  });
  window.addEventListener("popstate", () => openFromUrl());
  await loadList();
  await openFromUrl();
}

async function openFromUrl() {
  const id = new URLSearchParams(window.location.search).get("id");
  if (id) await openScenario(Number(id));
}

async function loadList() {
  const q = view.section.querySelector("#scenario-q").value.trim();
  view.listStatus.textContent = "Loading…";
  try {
    const page = await get("/v1/scenarios", { q, limit: 100 });
    clear(
      view.items,
      page.items.map((scenario) =>
        h(
          "li",
          {},
          h(
            "a",
            { href: `/scenarios?id=${scenario.id}`, "data-scenario": scenario.id, onclick: (event) => openLink(event, scenario.id) },
            h("span", { class: "scenario-name" }, scenario.name),
            h("span", { class: "muted" }, ` v${scenario.version}${scenario.tags.length ? ` · ${scenario.tags.join(", ")}` : ""}`),
          ),
        ),
      ),
    );
    view.listStatus.textContent = page.total ? `${page.total} saved` : "No saved scenario yet.";
    const choices = view.section.querySelector("#scenario-compare-choices");
    clear(
      choices,
      page.items.map((scenario) =>
        h("label", {}, h("input", { type: "checkbox", name: "scenario_ids", value: scenario.id }), ` ${scenario.name} `, h("span", { class: "muted" }, `#${scenario.id}`)),
      ),
    );
  } catch (error) {
    view.listStatus.textContent = "";
    clear(view.items, h("li", {}, problemBlock(error)));
  }
}

function openLink(event, id) {
  if (event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  window.history.pushState(null, "", `/scenarios?id=${id}`);
  openScenario(id);
}

async function createFromExample() {
  const doc = await openapi();
  const example = (requestSchema(doc, "/v1/scenarios")?.examples || [])[0];
  if (!example) return;
  view.listStatus.textContent = "Saving…";
  try {
    const saved = await post("/v1/scenarios", example, { headers: { "Idempotency-Key": idempotencyKey() } });
    window.history.pushState(null, "", `/scenarios?id=${saved.id}`);
    await loadList();
    await openScenario(saved.id);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    view.listStatus.textContent = "";
    view.listStatus.after(problemBlock(error));
  }
}

// --- one scenario -------------------------------------------------------------------------------

async function openScenario(id, version, { atLeast = 0 } = {}) {
  for (const link of view.items.querySelectorAll("a[data-scenario]")) {
    if (Number(link.dataset.scenario) === id) link.setAttribute("aria-current", "true");
    else link.removeAttribute("aria-current");
  }
  clear(view.detail, h("p", { class: "muted" }, "Loading…"));
  let scenario;
  let versions;
  try {
    // Just after a save, read until the saved version shows (a write the server acknowledged
    // before committing it would otherwise look lost for a moment).
    for (let attempt = 0; ; attempt += 1) {
      [scenario, versions] = await Promise.all([get(`/v1/scenarios/${id}`), get(`/v1/scenarios/${id}/versions`)]);
      const complete = scenario.version >= atLeast && versions.some((v) => v.version >= atLeast);
      if (complete || attempt >= 25) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } catch (error) {
    clear(view.detail, problemBlock(error));
    return;
  }
  const shown = versions.find((v) => v.version === (version ?? scenario.version)) || versions[versions.length - 1];
  // The plans' names as the API evaluates them: a recommended plan without a name takes the label of
  // the option it resolves to, and the analyses name plans by those.
  let names = null;
  try {
    const evaluated = await post(`/v1/scenarios/${id}/evaluate`, { version: shown.version });
    names = evaluated.plans.map((plan) => plan.name);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
  }
  renderScenario(scenario, versions, shown, names || (shown.body.plans || []).map(planName));
}

function planSummary(plan) {
  if (plan.kind === "recommended") {
    const workload = plan.workload || {};
    return `best ${words(plan.option)} option for ${workload.kind} of ${workload.model || (workload.models || []).join(", ")}`;
  }
  const parts = [];
  for (const [name, label] of [["capex", "capex item"], ["opex", "monthly line"], ["usage", "per-token line"], ["instances", "instance line"]]) {
    const lines = plan[name]?.length || 0;
    if (lines) parts.push(`${lines} ${label}${lines === 1 ? "" : "s"}`);
  }
  if (plan.capacity) parts.push(`owned capacity (${usd(String(plan.capacity.capex_usd_per_unit))} a unit)`);
  return parts.join(", ") || "no cost lines";
}

const planName = (plan, index) => plan.name || `${words(plan.option || "plan")} ${index + 1}`;

function field(id, label, control, hintText) {
  control.id = id;
  const parts = [h("label", { for: id }, label), control];
  if (hintText) {
    control.setAttribute("aria-describedby", `${id}-hint`);
    parts.push(h("span", { class: "hint", id: `${id}-hint` }, hintText));
  }
  return h("div", { class: "field" }, parts);
}

const numberInput = (name, value) => h("input", { name, type: "number", step: "any", value, inputmode: "decimal" });

function select(name, options, chosen) {
  return h("select", { name }, options.map(([value, label]) => h("option", { value, selected: value === chosen }, label)));
}

function analysesForm(names) {
  const twoPlans = names.length >= 2;
  return h(
    "form",
    { id: "scenario-analyses", class: "analyses-form", novalidate: true },
    h("div", { class: "form-alert", role: "alert", hidden: true }),
    h(
      "fieldset",
      { class: "group", "data-field": "monte_carlo" },
      h("legend", {}, "Monte Carlo"),
      h(
        "div",
        { class: "fields" },
        field("mc-samples", "Samples", h("input", { name: "monte_carlo.samples", type: "number", step: "1", value: 2000, inputmode: "numeric" })),
        field("mc-seed", "Seed", h("input", { name: "monte_carlo.seed", type: "number", step: "1", value: 7, inputmode: "numeric" })),
        field("mc-traffic-low", "Traffic ×, low (P10)", numberInput("monte_carlo.distributions.0.low", 0.7), "lognormal multiplier of the forecast"),
        field("mc-traffic-high", "Traffic ×, high (P90)", numberInput("monte_carlo.distributions.0.high", 1.5)),
        field("mc-price-low", "Prices ×, low", numberInput("monte_carlo.distributions.1.low", 0.85), "triangular multiplier, most likely 1"),
        field("mc-price-high", "Prices ×, high", numberInput("monte_carlo.distributions.1.high", 1.2)),
        field("mc-metric", "Compare by", select("monte_carlo.metric", [["total_usd", "total cost"], ["npv_usd", "present value (NPV)"]], "total_usd")),
      ),
    ),
    twoPlans
      ? h(
          "fieldset",
          { class: "group", "data-field": "break_even" },
          h("legend", {}, "Break-even"),
          h(
            "div",
            { class: "fields" },
            field("be-plan-a", "Plan A", select("break_even.plan_a", names.map((n) => [n, n]), names[0])),
            field("be-plan-b", "Plan B", select("break_even.plan_b", names.map((n) => [n, n]), names[1])),
            field("be-variable", "Against", select("break_even.variable", [["volume", "traffic volume"], ["utilisation", "utilisation"], ["horizon_months", "horizon"]], "volume")),
          ),
        )
      : h("p", { class: "muted" }, "Break-even needs two plans."),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary", id: "scenario-evaluate" }, "Evaluate with Monte Carlo"), h("span", { class: "muted", role: "status", id: "scenario-status" })),
  );
}

function analysesBody(form, version) {
  const value = (name) => form.querySelector(`[name="${name}"]`)?.value.trim() ?? "";
  const num = (name) => (value(name) === "" ? undefined : Number(value(name)));
  const body = {
    version,
    monte_carlo: {
      samples: num("monte_carlo.samples"),
      seed: num("monte_carlo.seed"),
      metric: value("monte_carlo.metric") || undefined,
      distributions: [
        { input: "traffic", kind: "lognormal", low: num("monte_carlo.distributions.0.low"), high: num("monte_carlo.distributions.0.high") },
        { input: "price", kind: "triangular", low: num("monte_carlo.distributions.1.low"), high: num("monte_carlo.distributions.1.high"), mode: 1 },
      ],
    },
    sensitivity: {},
  };
  if (form.querySelector('[name="break_even.plan_a"]')) {
    body.break_even = { plan_a: value("break_even.plan_a"), plan_b: value("break_even.plan_b"), variable: value("break_even.variable") };
  }
  return body;
}

function editForm(scenario, shown) {
  const { name, tags } = scenario;
  const editable = { name, tags, ...shown.body };
  const textarea = h("textarea", { id: "scenario-body", name: "scenario", rows: 16, spellcheck: "false", "aria-describedby": "scenario-body-hint" }, JSON.stringify(editable, null, 2));
  const form = h(
    "form",
    { id: "scenario-edit", novalidate: true },
    h("div", { class: "field wide" }, h("label", { for: "scenario-body" }, "Scenario (JSON, as PUT /v1/scenarios/{id} takes it)"), textarea, h("span", { class: "hint", id: "scenario-body-hint" }, `Edits version ${shown.version}; saving makes version ${scenario.version + 1}.`)),
    h("div", { class: "form-alert", role: "alert", hidden: true }),
    h("div", { class: "field wide" }, h("label", { for: "scenario-note" }, "What this version changes"), h("input", { id: "scenario-note", name: "note", maxlength: 500 })),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save as a new version")),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    let body;
    try {
      body = JSON.parse(textarea.value);
    } catch (error) {
      showProblem(form, { problem: { title: "Not JSON", errors: [{ field: "scenario", reason: error.message }] } });
      return;
    }
    const note = form.querySelector("#scenario-note").value.trim();
    if (note) body.note = note;
    try {
      const saved = await request("PUT", `/v1/scenarios/${scenario.id}`, { body, headers: { "If-Match": `"v${scenario.version}"` } });
      await openScenario(saved.id, undefined, { atLeast: saved.version });
      await loadList();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const problem = { ...error.problem, errors: (error.problem.errors || []).map((e) => ({ ...e, reason: `${e.field}: ${e.reason}`, field: "scenario" })) };
      showProblem(form, { status: error.status, problem });
    }
  });
  return h("details", { class: "card" }, h("summary", {}, h("h3", { class: "inline-heading" }, "Edit and save a new version")), form);
}

function renderScenario(scenario, versions, shown, names) {
  const body = shown.body;
  const plans = body.plans || [];
  const versionSelect = h(
    "select",
    { id: "scenario-version", name: "version" },
    versions.map((v) => h("option", { value: v.version, selected: v.version === shown.version }, `version ${v.version} · ${when(v.created_at)}${v.note ? ` · ${v.note}` : ""}${v.version === scenario.version ? " (current)" : ""}`)),
  );
  versionSelect.addEventListener("change", () => openScenario(scenario.id, Number(versionSelect.value)));
  const traffic = body.traffic || {};
  const assumptions = body.assumptions || {};
  const form = analysesForm(names);
  const results = h("div", { id: "scenario-results", "aria-live": "polite" });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    evaluate(scenario, shown.version, form, results, names);
  });
  clear(
    view.detail,
    h("h2", { id: "scenario-title", tabindex: "-1" }, scenario.name),
    h("p", { class: "muted" }, `${scenario.tags.length ? `tags: ${scenario.tags.join(", ")} · ` : ""}prices from catalog version ${shown.catalog_version_id ?? "current"} · updated ${when(scenario.updated_at)}`),
    h("div", { class: "field" }, h("label", { for: "scenario-version" }, "Version"), versionSelect),
    body.description ? h("p", {}, body.description) : null,
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "traffic in month 1"),
      h("dd", {}, traffic.monthly_tokens ? `${traffic.monthly_tokens.length} months given` : `${number(traffic.tokens_per_month)} tokens`),
      h("dt", {}, "growth per month"),
      h("dd", {}, percent(traffic.growth_per_month ?? 0, 1)),
      h("dt", {}, "horizon"),
      h("dd", {}, `${assumptions.horizon_months ?? 36} months`),
      h("dt", {}, "discount rate"),
      h("dd", {}, percent(assumptions.discount_rate_annual ?? 0.08, 1)),
    ),
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "data" },
        h("caption", {}, "Plans compared"),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "plan"), h("th", { scope: "col" }, "kind"), h("th", { scope: "col" }, "what it is"))),
        h("tbody", {}, plans.map((plan, index) => h("tr", {}, h("th", { scope: "row" }, names[index] ?? planName(plan, index)), h("td", {}, plan.kind || "custom"), h("td", {}, planSummary(plan))))),
      ),
    ),
    form,
    results,
    editForm(scenario, shown),
  );
  view.detail.querySelector("#scenario-title").focus({ preventScroll: true });
}

// --- evaluation ---------------------------------------------------------------------------------

async function evaluate(scenario, version, form, results, planNames) {
  clearErrors(form);
  const status = form.querySelector("#scenario-status");
  const button = form.querySelector("#scenario-evaluate");
  const body = analysesBody(form, version);
  button.disabled = true;
  status.textContent = "Evaluating…";
  try {
    const answer = await post(`/v1/scenarios/${scenario.id}/evaluate`, body);
    status.textContent = "";
    renderEvaluation(scenario, body, answer, results, planNames);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    status.textContent = "";
    clear(results);
    showProblem(form, error);
  } finally {
    button.disabled = false;
  }
}

function evaluationTable(answer) {
  const monteCarlo = Object.fromEntries((answer.monte_carlo?.plans || []).map((plan) => [plan.name, plan]));
  const header = ["plan", "total", "NPV", "capex", "per M tokens", "P10", "P50", "P90", "cheapest in"];
  return h(
    "table",
    { class: "data stack-on-phone", id: "evaluation-table" },
    h("caption", {}, `Over ${answer.assumptions.horizon_months} months; Monte Carlo of ${number(answer.monte_carlo?.samples)} samples (${words(answer.monte_carlo?.metric || "total_usd")})`),
    h("thead", {}, h("tr", {}, header.map((name) => h("th", { scope: "col" }, name)))),
    h(
      "tbody",
      {},
      answer.plans.map((plan) => {
        const mc = monteCarlo[plan.name] || {};
        const cells = [
          usd(plan.total_usd),
          usd(plan.npv_usd),
          usd(plan.capex_usd),
          plan.usd_per_million_tokens === null ? "n/a" : usd(plan.usd_per_million_tokens, 4),
          mc.p10_usd ? usd(mc.p10_usd) : "n/a",
          mc.p50_usd ? usd(mc.p50_usd) : "n/a",
          mc.p90_usd ? usd(mc.p90_usd) : "n/a",
          mc.probability_cheapest === undefined ? "n/a" : `${percent(mc.probability_cheapest)} of samples`,
        ];
        return h(
          "tr",
          {},
          h("th", { scope: "row", "data-label": header[0] }, h("span", {}, plan.name, plan.name === answer.cheapest ? h("span", { class: "badge cheapest" }, "cheapest") : null)),
          cells.map((cell, index) => h("td", { class: "num", "data-label": header[index + 1] }, cell)),
        );
      }),
    ),
  );
}

function breakEvenWords(breakEven) {
  if (!breakEven) return null;
  if (breakEven.never) return h("p", {}, `${breakEven.plan_a} and ${breakEven.plan_b} never cost the same in the range searched.`);
  const crossings = breakEven.crossings.map((c) => h("li", {}, `At ${number(c.x)} ${breakEven.unit}: ${c.cheaper_below} is cheaper below, ${c.cheaper_above} above.`));
  return h("div", {}, h("h3", {}, "Break-even"), h("ul", {}, crossings));
}

async function chartImage(scenario, body, chart, title, plan) {
  const figure = h("figure", { class: "chart-figure", "data-chart": chart }, h("p", { class: "muted" }, "Drawing…"));
  const query = plan ? { plan } : undefined;
  request("POST", `/v1/scenarios/${scenario.id}/charts/${chart}`, { body, query, as: "blob" })
    .then((blob) => {
      const url = URL.createObjectURL(blob);
      view.chartUrls.push(url);
      clear(figure, h("img", { src: url, alt: title, class: "chart-image" }), h("figcaption", {}, title));
    })
    .catch((error) => clear(figure, h("figcaption", {}, title), problemBlock(error)));
  return figure;
}

async function download(scenario, body, format, button) {
  button.disabled = true;
  try {
    const response = await request("POST", `/v1/scenarios/${scenario.id}/evaluate`, { body, query: { format }, as: "response" });
    const disposition = response.headers.get("Content-Disposition") || "";
    const filename = /filename="([^"]+)"/.exec(disposition)?.[1] || `scenario-${scenario.id}.${format}`;
    saveBlob(await response.blob(), filename);
  } catch (error) {
    button.after(problemBlock(error));
  } finally {
    button.disabled = false;
  }
}

async function renderEvaluation(scenario, body, answer, results, planNames) {
  for (const url of view.chartUrls.splice(0)) URL.revokeObjectURL(url);
  const csv = h("button", { type: "button", class: "secondary", id: "download-csv" }, "Download CSV");
  const xlsx = h("button", { type: "button", class: "secondary", id: "download-xlsx" }, "Download XLSX");
  csv.addEventListener("click", () => download(scenario, body, "csv", csv));
  xlsx.addEventListener("click", () => download(scenario, body, "xlsx", xlsx));
  const tornadoPlan = h("select", { id: "tornado-plan", name: "plan" }, planNames.map((name) => h("option", { value: name }, name)));
  const charts = h("div", { class: "chart-grid" });
  const drawCharts = async () => {
    const figures = [];
    for (const [chart, title] of CHARTS) {
      if (chart === "break_even" && !body.break_even) continue;
      const plan = chart === "tornado" ? tornadoPlan.value : undefined;
      figures.push(await chartImage(scenario, body, chart, plan ? `${title}: ${plan}` : title, plan));
    }
    clear(charts, figures);
  };
  tornadoPlan.addEventListener("change", drawCharts);
  clear(
    results,
    h("h3", { id: "evaluation-title", tabindex: "-1" }, `Evaluation of version ${answer.version ?? body.version}`),
    h("p", {}, `Cheapest: ${answer.cheapest}. Prices from catalog version ${answer.catalog_version}.`),
    h("div", { class: "table-scroll" }, evaluationTable(answer)),
    breakEvenWords(answer.break_even),
    h("div", { class: "actions" }, csv, xlsx, h("div", { class: "field inline-field" }, h("label", { for: "tornado-plan" }, "Tornado for"), tornadoPlan)),
    charts,
  );
  await drawCharts();
  results.querySelector("#evaluation-title").focus({ preventScroll: true });
}

// --- several scenarios side by side ---------------------------------------------------------------

async function compareTicked(form) {
  clearErrors(form);
  const ids = [...form.querySelectorAll('[name="scenario_ids"]:checked')].map((box) => Number(box.value));
  if (ids.length < 2) {
    showProblem(form, { problem: { title: "Choose two or more", errors: [{ field: "scenario_ids", reason: "tick two or more scenarios" }] } });
    return;
  }
  clear(view.detail, h("p", { class: "muted" }, "Comparing…"));
  try {
    const answer = await post("/v1/scenarios/compare", { scenario_ids: ids });
    renderComparison(answer);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    clear(view.detail);
    showProblem(form, error);
  }
}

function comparisonRows(rows, nameOf) {
  return rows.map((row) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, nameOf(row)),
      row.usd.map((value, index) =>
        h(
          "td",
          { class: "num" },
          value === null ? h("span", { class: "muted" }, "none") : usd(value),
          index > 0 && row.delta_usd[index] !== "0.00" ? h("span", { class: "delta" }, ` (${row.delta_usd[index].startsWith("-") ? "" : "+"}${usd(row.delta_usd[index])})`) : null,
        ),
      ),
    ),
  );
}

function renderComparison(answer) {
  const head = h("thead", {}, h("tr", {}, h("th", { scope: "col" }, ""), answer.labels.map((label) => h("th", { scope: "col" }, label))));
  const table = (caption, rows, nameOf) =>
    h("div", { class: "table-scroll" }, h("table", { class: "data comparison" }, h("caption", {}, caption), head.cloneNode(true), h("tbody", {}, comparisonRows(rows, nameOf))));
  clear(
    view.detail,
    h("h2", { id: "comparison-title", tabindex: "-1" }, "Side by side"),
    h("p", { class: "muted" }, `Each plan of each scenario, current versions. Differences in brackets are against ${answer.baseline}.`),
    table("Totals", answer.summary, (row) => words(row.key)),
    table("By category, over the horizon", answer.categories, (row) => words(row.key)),
    h("details", { class: "card" }, h("summary", {}, "Every cost line"), table("By cost line", answer.lines, (row) => `${row.key} (${row.category})`)),
  );
  view.detail.querySelector("#comparison-title").focus({ preventScroll: true });
}
