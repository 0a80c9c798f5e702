// View "Plan a workload": a form whose control names are the request's field paths
// (`workload.input_tokens`, `constraints.max_usd_per_month`, `assumptions.pue`), so the address bar
// holds the request and an error's `errors[].field` finds its control. Defaults and their
// descriptions come from the API's OpenAPI document; assumption defaults and sources from
// GET /v1/recommendations/assumptions. The answer is POST /v1/recommendations, drawn as it comes.

import { ApiError, get, openapi, post, requestSchema, resolveSchema } from "./api.js";
import { PLAN_COLOURS, breakEvenChart } from "./chart.js";
import { clear, clearErrors, h, number, percent, showProblem, usd, usdFine, when, words } from "./dom.js";

const KINDS = ["inference", "batch", "training"];
const OPTION_KINDS = ["hosted_api", "cloud", "owned", "local", "hybrid"];
const OPTION_NAMES = { hosted_api: "Hosted API", cloud: "Cloud rental", owned: "Owned hardware", local: "Local GPU", hybrid: "Hybrid" };
const MAIN_ASSUMPTIONS = [
  "horizon_months",
  "serving_engine",
  "electricity_usd_per_kwh",
  "pue",
  "target_utilisation",
  "cost_of_capital_annual",
  "depreciation_years",
  "hardware_lead_time_months",
];
// What each rejection rule means (engine/recommendation.py, RejectReason); a rule added later
// is still shown, by its name.
const REJECT_REASONS = {
  violates_data_residency: "on premises only, or a region that is not allowed",
  violates_constraint: "a provider, accelerator, option kind or precision the constraints exclude",
  unsupported_offer: "GPU slices or TPUs for purchase: not modelled",
  unspecified_hardware: "the catalog lacks a spec the estimate needs",
  unsupported_precision: "a weight format the hardware's serving engines do not run",
  exceeds_context_window: "the requests are longer than the model's context window",
  does_not_fit_memory: "the model and its KV cache do not fit in the accelerators' memory",
  misses_latency_target: "cannot meet the TTFT or TPOT target",
  exceeds_local_capacity: "more traffic than one local card serves",
  one_off_job: "buying hardware for a single batch job",
  unpriced: "a price the plan needs is missing (never costed as $0)",
  incomplete_price: "the price covers only part of what is needed",
  misses_deadline: "cannot finish before the deadline",
  over_budget: "above the monthly budget",
  over_capex: "above the largest purchase allowed",
};
const VOLUME_UNITS = { requests_per_day: "Requests per day", tokens: "Tokens in the job", runs_per_year: "Runs per year" };

let state = null;

export async function startPlan(section) {
  const form = section.querySelector("#plan-form");
  const doc = await openapi();
  const schema = requestSchema(doc, "/v1/recommendations");
  const workloadProperty = schema.properties.workload;
  const kindSchemas = {};
  for (const [kind, ref] of Object.entries(workloadProperty.discriminator?.mapping || {})) {
    kindSchemas[kind] = resolveSchema(doc, { $ref: ref });
  }
  state = {
    form,
    doc,
    schema,
    kindSchemas,
    constraintsSchema: resolveSchema(doc, schema.properties.constraints),
    assumptionsSchema: resolveSchema(doc, schema.properties.assumptions),
    examples: schema.examples || [],
    result: section.querySelector("#plan-result"),
    status: section.querySelector("#plan-status"),
  };
  const [assumptions, models] = await Promise.all([
    get("/v1/recommendations/assumptions"),
    get("/v1/models", { limit: 500, sort: "id" }).catch(() => ({ items: [] })),
  ]);
  state.assumptionDefaults = assumptions;
  fillModelList(models.items);
  describeFields();
  buildAssumptionFields(assumptions);
  wireForm();
  const params = new URLSearchParams(window.location.search);
  if (params.has("workload.kind")) {
    fillForm(params);
    await submit({ push: false });
  } else {
    showKind(selectedKind());
  }
}

// --- the form -----------------------------------------------------------------------------------

function fillModelList(models) {
  const list = document.getElementById("model-ids");
  clear(list, models.map((model) => h("option", { value: model.id }, model.name)));
}

function hint(control, ...parts) {
  const id = `${control.id}-hint`;
  const existing = document.getElementById(id);
  if (existing) existing.remove();
  const element = h("span", { class: "hint", id }, ...parts);
  control.after(element);
  control.setAttribute("aria-describedby", id);
}

function shownDefault(value) {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.length ? value.join(", ") : null;
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

// Each workload and constraint field says its default and, where the API documents it, what it means.
function describeFields() {
  for (const container of state.form.querySelectorAll(".kind-fields")) {
    const schema = state.kindSchemas[container.dataset.kind];
    if (!schema) continue;
    for (const control of container.querySelectorAll("[name]")) {
      const property = resolveSchema(state.doc, schema.properties?.[control.name.split(".").pop()] || {});
      const name = control.name.split(".").pop();
      describeControl(control, property, control.dataset.required === "true" || (schema.required || []).includes(name));
    }
  }
  const model = state.form.querySelector("#plan-model");
  describeControl(model, {}, true);
  for (const control of state.form.querySelectorAll("#plan-constraints [name]")) {
    if (control.type === "checkbox") continue;
    const property = resolveSchema(state.doc, state.constraintsSchema.properties?.[control.name.split(".").pop()] || {});
    describeControl(control, property, false);
  }
  const limit = state.form.querySelector("#plan-limit");
  describeControl(limit, state.schema.properties.limit || {}, false);
}

function describeControl(control, property, required) {
  const parts = [];
  const value = shownDefault(property.default);
  if (required) parts.push(h("span", { class: "required" }, "required"));
  else if (control.dataset.either) parts.push(control.dataset.either);
  else if (value !== null) {
    parts.push(`default ${value}`);
    if (control.tagName === "INPUT") control.placeholder = value;
  } else parts.push("optional");
  if (property.description) parts.push(` · ${property.description}`);
  if (property.minimum !== undefined && control.type === "number") control.min = property.minimum;
  if (property.maximum !== undefined && control.type === "number") control.max = property.maximum;
  hint(control, ...parts);
}

function buildAssumptionFields(defaults) {
  const main = state.form.querySelector("#assumption-main");
  const more = state.form.querySelector("#assumption-more");
  const names = Object.keys(defaults);
  const ordered = [...MAIN_ASSUMPTIONS.filter((name) => names.includes(name)), ...names.filter((name) => !MAIN_ASSUMPTIONS.includes(name))];
  for (const name of ordered) {
    const entry = defaults[name];
    const field = assumptionField(name, entry);
    (MAIN_ASSUMPTIONS.includes(name) ? main : more).append(field);
  }
}

function assumptionField(name, entry) {
  const id = `asm-${name}`;
  const property = resolveSchema(state.doc, state.assumptionsSchema.properties?.[name] || {});
  const label = h("label", { for: id }, words(name));
  let control;
  const value = entry.value;
  if (property.enum) {
    control = h("select", { id, name: `assumptions.${name}` }, h("option", { value: "" }, `default (${value})`), property.enum.map((option) => h("option", { value: option }, option)));
  } else if (typeof value === "number" || value === null) {
    control = h("input", { id, name: `assumptions.${name}`, type: "number", step: "any", inputmode: "decimal", placeholder: value ?? "" });
  } else if (typeof value === "string") {
    control = h("input", { id, name: `assumptions.${name}`, placeholder: value });
  } else {
    // Lists and tables of assumptions (reserved discounts by provider) are set through the API.
    control = h("output", { id, name: `assumptions.${name}`, class: "readonly" }, JSON.stringify(value));
  }
  const source = h("details", { class: "source" }, h("summary", {}, "source"), h("p", {}, entry.source || "no source given"));
  const hintId = `${id}-hint`;
  const hintText = h("span", { class: "hint", id: hintId }, `default ${shownDefault(value) ?? "none"}`);
  if (control.tagName !== "OUTPUT") control.setAttribute("aria-describedby", hintId);
  return h("div", { class: "field assumption" }, label, control, hintText, source);
}

function selectedKind() {
  const checked = state.form.querySelector('[name="workload.kind"]:checked');
  return checked ? checked.value : "inference";
}

function showKind(kind) {
  for (const container of state.form.querySelectorAll(".kind-fields")) {
    const active = container.dataset.kind === kind;
    container.hidden = !active;
    for (const control of container.querySelectorAll("[name]")) control.disabled = !active;
  }
}

function wireForm() {
  const { form } = state;
  for (const radio of form.querySelectorAll('[name="workload.kind"]')) {
    radio.addEventListener("change", () => showKind(selectedKind()));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit({ push: true });
  });
  form.querySelector("#plan-copy-link").addEventListener("click", async () => {
    const url = `${window.location.origin}/?${formParams().toString()}`;
    window.history.replaceState(null, "", url);
    try {
      await navigator.clipboard.writeText(url);
      state.status.textContent = "Link copied.";
    } catch {
      state.status.textContent = `Link: ${url}`;
    }
  });
  for (const button of form.querySelectorAll("[data-example]")) {
    button.addEventListener("click", () => {
      const example = state.examples[Number(button.dataset.example)];
      if (!example) return;
      fillForm(paramsOfBody(example));
      submit({ push: true });
    });
  }
  window.addEventListener("popstate", () => {
    const params = new URLSearchParams(window.location.search);
    if (params.has("workload.kind")) {
      fillForm(params);
      submit({ push: false });
    }
  });
}

const listOf = (text) => text.split(",").map((item) => item.trim()).filter(Boolean);

function activeControls() {
  return [...state.form.querySelectorAll("[name]")].filter(
    (control) => !control.disabled && control.tagName !== "OUTPUT" && control.type !== "radio" && control.type !== "checkbox" && control.name !== "api_key",
  );
}

// The form as URL parameters, named as the request's fields (empty ones left out).
function formParams() {
  const params = new URLSearchParams();
  params.set("workload.kind", selectedKind());
  for (const control of activeControls()) {
    if (control.value.trim() !== "") params.set(control.name, control.value.trim());
  }
  for (const box of state.form.querySelectorAll('input[type="checkbox"]:checked')) params.append(box.name, box.value);
  return params;
}

function fillForm(params) {
  const { form } = state;
  form.reset();
  const kind = KINDS.includes(params.get("workload.kind")) ? params.get("workload.kind") : "inference";
  form.querySelector(`[name="workload.kind"][value="${kind}"]`).checked = true;
  showKind(kind);
  for (const [name, value] of params) {
    if (name === "workload.kind") continue;
    const boxes = form.querySelectorAll(`input[type="checkbox"][name="${CSS.escape(name)}"]`);
    if (boxes.length) {
      for (const box of boxes) if (box.value === value) box.checked = true;
      continue;
    }
    const control = [...form.querySelectorAll(`[name="${CSS.escape(name)}"]`)].find((item) => !item.disabled);
    if (control && control.tagName !== "OUTPUT") control.value = value;
  }
  for (const details of form.querySelectorAll("details.group")) {
    const filled = [...details.querySelectorAll("[name]")].filter((c) => (c.type === "checkbox" ? c.checked : c.tagName !== "OUTPUT" && c.value !== ""));
    const count = details.querySelector("[data-count]");
    if (count) count.textContent = filled.length ? `(${filled.length} set)` : "";
  }
}

// A request body (an OpenAPI example) as URL parameters.
function paramsOfBody(body) {
  const params = new URLSearchParams();
  const workload = body.workload || {};
  params.set("workload.kind", workload.kind || "inference");
  for (const [name, value] of Object.entries(workload)) {
    if (name === "kind") continue;
    if (name === "models") params.set("workload.model", value.join(", "));
    else params.set(`workload.${name}`, String(value));
  }
  for (const section of ["constraints", "assumptions"]) {
    for (const [name, value] of Object.entries(body[section] || {})) {
      if (name === "allowed_options") for (const option of value) params.append(`${section}.${name}`, option);
      else if (typeof value === "boolean") { if (value) params.append(`${section}.${name}`, "true"); }
      else params.set(`${section}.${name}`, Array.isArray(value) ? value.join(", ") : String(value));
    }
  }
  for (const name of ["as_of", "catalog_version", "limit"]) if (body[name] !== undefined) params.set(name, body[name]);
  return params;
}

function controlValue(control) {
  const text = control.value.trim();
  if (control.type === "number") return Number(text);
  if (control.dataset.list === "number") return listOf(text).map((item) => (Number.isFinite(Number(item)) ? Number(item) : item));
  if (control.dataset.list) return listOf(text);
  if (control.type === "datetime-local") return /Z|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`;
  return text;
}

// The request body: only what the user filled in, so the API applies its own defaults.
function requestBody() {
  const kind = selectedKind();
  const body = { workload: { kind }, constraints: {}, assumptions: {} };
  for (const control of activeControls()) {
    if (control.value.trim() === "") continue;
    const [section, ...rest] = control.name.split(".");
    const field = rest.join(".");
    if (control.name === "workload.model") {
      const models = listOf(control.value);
      if (kind !== "training" && models.length > 1) body.workload.models = models;
      else body.workload.model = control.value.trim();
    } else if (rest.length === 0) body[section] = controlValue(control);
    else body[section][field] = controlValue(control);
  }
  if (state.form.querySelector('[name="constraints.on_premises_only"]').checked) body.constraints.on_premises_only = true;
  const options = [...state.form.querySelectorAll('[name="constraints.allowed_options"]:checked')].map((box) => box.value);
  if (options.length) body.constraints.allowed_options = options;
  if (body.catalog_version !== undefined) body.catalog_version = Number(body.catalog_version);
  if (body.limit !== undefined) body.limit = Number(body.limit);
  return body;
}

async function submit({ push }) {
  const { form, result, status } = state;
  clearErrors(form);
  const params = formParams();
  const url = `/?${params.toString()}`;
  if (push && `${window.location.pathname}${window.location.search}` !== url) window.history.pushState(null, "", url);
  const body = requestBody();
  const button = form.querySelector("#plan-submit");
  button.disabled = true;
  status.textContent = "Ranking every candidate…";
  result.setAttribute("aria-busy", "true");
  try {
    const answer = await post("/v1/recommendations", body);
    status.textContent = "";
    renderAnswer(answer, body);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    status.textContent = "";
    clear(result);
    showProblem(form, error, { kinds: KINDS });
  } finally {
    button.disabled = false;
    result.removeAttribute("aria-busy");
  }
}

// --- the answer ---------------------------------------------------------------------------------

function priceLinks(option) {
  const setup = option.setup || {};
  const links = [];
  for (const id of setup.offer_ids || []) links.push(h("a", { href: `/catalog?table=cloud-offers&id=${id}` }, `cloud offer ${id}`));
  if (setup.api_price_id) links.push(h("a", { href: `/catalog?table=api-prices&id=${setup.api_price_id}` }, `API price ${setup.api_price_id}`));
  if (setup.accelerator_id && (option.option === "owned" || option.option === "local" || setup.pricing_mode === "purchase")) {
    links.push(h("a", { href: `/catalog?table=accelerators&id=${encodeURIComponent(setup.accelerator_id)}` }, `${setup.accelerator_id} purchase price`));
  }
  if (!links.length) return null;
  const items = [];
  links.forEach((link, index) => items.push(index ? ", " : "", link));
  return h("p", { class: "price-links" }, "Priced from the catalog: ", items);
}

function mainFigure(option) {
  if (option.usd_per_million_tokens !== null && option.usd_per_million_tokens !== undefined) {
    return [usdFine(option.usd_per_million_tokens), "per million tokens"];
  }
  if (option.usd_per_run !== null && option.usd_per_run !== undefined) return [usd(option.usd_per_run), "per run"];
  return [usd(option.usd_per_month), "per month"];
}

function setupFacts(setup) {
  const facts = [];
  const add = (name, value) => {
    if (value !== null && value !== undefined && value !== "" && !(Array.isArray(value) && !value.length)) facts.push([name, value]);
  };
  add("model", setup.model_id);
  add("hosted model", setup.hosted_model_id);
  if (setup.accelerator_id) add("accelerators", `${setup.accelerator_count ?? "?"} × ${setup.accelerator_id}`);
  add("per replica", setup.accelerators_per_replica);
  add("replicas at the peak", setup.replicas);
  add("precision", setup.precision);
  add("serving engine", setup.serving_engine);
  add("provider", setup.provider);
  add("region", setup.region);
  if (setup.instance_type) add("instances", `${setup.instance_count ?? "?"} × ${setup.instance_type}`);
  add("pricing", setup.pricing_mode && words(setup.pricing_mode));
  add("scaling", setup.scaling && words(setup.scaling));
  return facts;
}

function factList(facts) {
  return h("dl", { class: "facts" }, facts.map(([name, value]) => [h("dt", {}, name), h("dd", {}, String(value))]));
}

function rankNote(option, answer) {
  const shown = answer.options.some((item) => item.rank === option.rank);
  if (option.rank && shown) return h("a", { href: `#option-${option.rank}` }, `ranked #${option.rank}`);
  if (option.rank) return `ranked #${option.rank} (below the ${answer.options.length} shown)`;
  return "outside the ranked list";
}

function bestCard(kind, option, answer, asked) {
  const title = h("h3", {}, OPTION_NAMES[kind] || words(kind));
  if (!option) {
    const note = (answer.notes || []).find((text) => text.startsWith(`${kind}:`));
    const why = !asked
      ? "Left out by the constraints."
      : note
        ? note.slice(kind.length + 1).trim()
        : "No feasible option of this kind; the rejected candidates below say why.";
    return h("article", { class: "best-card empty", "data-option": kind }, title, h("p", { class: "muted" }, why));
  }
  const [figure, unit] = mainFigure(option);
  return h(
    "article",
    { class: "best-card", "data-option": kind },
    title,
    h("p", { class: "best-label" }, option.label),
    h("p", { class: "figure" }, h("strong", {}, figure), ` ${unit}`),
    h(
      "p",
      { class: "muted" },
      `${usd(option.total_usd)} over the ${answer.workload_kind === "batch" ? "job" : "horizon"}`,
      option.capex_usd && option.capex_usd !== "0.00" ? ` · ${usd(option.capex_usd)} capex` : "",
    ),
    h("p", {}, rankNote(option, answer)),
    priceLinks(option),
  );
}

// The ranked option a hybrid part is made of (its label, or "N x label" for the base), whose
// catalog rows the API names; the hybrid option itself names none.
function partOption(part, answer) {
  const label = part.label.replace(/^\d+ x /, "");
  return answer.options.find((option) => option.option !== "hybrid" && option.label === label);
}

function hybridInWords(hybrid, answer) {
  if (!hybrid) return null;
  const parts = hybrid.hybrid_parts || [];
  const sentences = parts.map((part) => {
    const share = percent(part.share_of_requests);
    const text =
      part.role === "base"
        ? `Base: ${part.units ?? "?"} unit${part.units === 1 ? "" : "s"} of ${part.label.replace(/^\d+ x /, "")}, serving ${share} of the requests for ${usd(part.usd)} over the horizon.`
        : `Burst: ${part.label} serves ${share} of the requests, those above the base, for ${usd(part.usd)}.`;
    const option = partOption(part, answer);
    return [text, option ? priceLinks(option) : null];
  });
  return h(
    "section",
    { class: "card hybrid", "aria-labelledby": "hybrid-title" },
    h("h2", { id: "hybrid-title" }, "The hybrid plan in words"),
    h("p", {}, `${hybrid.label}: ${usd(hybrid.total_usd)} in total, ${usd(hybrid.usd_per_month)} a month.`),
    sentences.length ? h("ul", {}, sentences.map((parts) => h("li", {}, parts))) : null,
    h("p", {}, hybrid.rationale),
  );
}

function breakEvenSection(breakEven) {
  if (!breakEven) return null;
  const unitLabel = VOLUME_UNITS[breakEven.volume_unit] || words(breakEven.volume_unit);
  const legend = h(
    "ul",
    { class: "legend" },
    breakEven.compared.map((label, index) => h("li", {}, h("span", { class: `swatch swatch-${index % PLAN_COLOURS.length}` }), label)),
  );
  const title = "Monthly cost of each compared plan against volume";
  const figure = h("figure", { class: "chart-figure" });
  // Drawn for the width it gets, and again when that changes (a phone turned, a window resized).
  let drawnFor = 0;
  const draw = (room) => {
    if (Math.abs(room - drawnFor) < 40) return;
    drawnFor = room;
    const chart = breakEvenChart(breakEven, { title, unitLabel, width: room });
    const old = figure.querySelector("svg");
    if (old) old.replaceWith(chart);
    else figure.prepend(chart);
  };
  new ResizeObserver((entries) => draw(entries[0].contentRect.width)).observe(figure);
  figure.append(h("figcaption", {}, legend));
  const crossovers = (breakEven.crossovers || []).map((c) =>
    h("li", {}, `At ${number(c.volume)} ${words(breakEven.volume_unit)} (${number(c.multiplier, 2)} × today) ${c.to_label} becomes cheaper than ${c.from_label}.`),
  );
  const table = h(
    "table",
    { class: "data" },
    h("caption", {}, "The curve, USD per month"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, unitLabel), breakEven.compared.map((label) => h("th", { scope: "col" }, label)), h("th", { scope: "col" }, "cheapest"))),
    h(
      "tbody",
      {},
      breakEven.points.map((p) =>
        h("tr", {}, h("th", { scope: "row" }, number(p.volume)), breakEven.compared.map((label) => h("td", { class: "num" }, usd(p.usd_per_month[label]))), h("td", {}, p.winner)),
      ),
    ),
  );
  return h(
    "section",
    { class: "card", "aria-labelledby": "break-even-title" },
    h("h2", { id: "break-even-title" }, "Break-even: where the winner changes"),
    h("p", {}, breakEven.summary),
    figure,
    crossovers.length ? h("ul", {}, crossovers) : h("p", { class: "muted" }, "The winner does not change in the searched range."),
    h("details", {}, h("summary", {}, "The numbers behind the chart"), h("div", { class: "table-scroll" }, table)),
  );
}

function optionItem(option) {
  const [figure, unit] = mainFigure(option);
  const metrics = [];
  if (option.utilisation !== null) metrics.push(["utilisation", percent(option.utilisation)]);
  if (option.headroom !== null) metrics.push(["capacity above the peak", percent(option.headroom)]);
  if (option.ttft_ms !== null) metrics.push(["TTFT", `${number(option.ttft_ms)} ms`]);
  if (option.tpot_ms !== null) metrics.push(["TPOT", `${number(option.tpot_ms, 1)} ms`]);
  if (option.marginal_usd_per_million_tokens) metrics.push(["marginal per million tokens", usdFine(option.marginal_usd_per_million_tokens)]);
  if (option.marginal_usd_per_run) metrics.push(["marginal per run", usd(option.marginal_usd_per_run)]);
  if (option.accelerator_hours_per_run) metrics.push(["accelerator-hours per run", number(option.accelerator_hours_per_run)]);
  if (option.wall_clock_hours_per_run) metrics.push(["wall-clock hours per run", number(option.wall_clock_hours_per_run, 1)]);
  if (option.setting) metrics.push(["training setting", option.setting]);
  metrics.push(["per month", usd(option.usd_per_month)]);
  metrics.push(["capex", usd(option.capex_usd)]);
  metrics.push(["opex per month", usd(option.opex_usd_per_month)]);
  const breakdown = h(
    "table",
    { class: "data" },
    h("caption", {}, "Cost lines over the horizon"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "line"), h("th", { scope: "col", class: "num" }, "USD"), h("th", { scope: "col" }, "note"))),
    h("tbody", {}, option.breakdown.map((line) => h("tr", {}, h("th", { scope: "row" }, line.name), h("td", { class: "num" }, usd(line.usd)), h("td", {}, line.note || "")))),
  );
  const grouped = groupedAlternatives(option);
  return h(
    "li",
    { id: `option-${option.rank}`, class: "option", "data-option": option.option },
    h(
      "details",
      {},
      h(
        "summary",
        {},
        h("span", { class: "rank" }, `#${option.rank}`),
        h("span", { class: `badge ${option.option}` }, OPTION_NAMES[option.option] || words(option.option)),
        h("span", { class: "option-label" }, option.label, option.same_total?.length ? h("span", { class: "muted folded-count" }, ` +${option.same_total.length} at the same total`) : null),
        h("span", { class: "option-figures" }, h("strong", {}, usd(option.total_usd)), ` total · ${figure} ${unit}`),
      ),
      h(
        "div",
        { class: "option-body" },
        h("p", {}, option.rationale),
        option.uncertainty ? h("p", { class: "uncertainty" }, h("strong", {}, "Uncertainty: "), option.uncertainty) : null,
        h("div", { class: "two-columns" }, factList(setupFacts(option.setup)), factList(metrics)),
        priceLinks(option),
        option.risks.length ? h("div", {}, h("h4", {}, "Risks"), h("ul", {}, option.risks.map((risk) => h("li", {}, risk)))) : null,
        grouped,
        h("div", { class: "table-scroll" }, breakdown),
      ),
    ),
  );
}

// Options the API folds into this row: the same kind and provider at the same total.
function groupedAlternatives(option) {
  const others = option.same_total || [];
  if (!others.length) return null;
  return h("div", {}, h("h4", {}, `The same total, folded into this row (${others.length})`), h("ul", { class: "folded" }, others.map((label) => h("li", {}, label))));
}

// When nothing is feasible: each constraint that binds, and what relaxing it alone would admit.
function bindingSection(binding) {
  if (!binding?.length) return null;
  return h(
    "section",
    { class: "card binding", "aria-labelledby": "binding-title" },
    h("h2", { id: "binding-title" }, "What stands in the way"),
    h(
      "ul",
      {},
      binding.map((item) =>
        h(
          "li",
          {},
          h("strong", {}, words(item.constraint)),
          `: relaxed to ${item.relaxed_to}, `,
          item.cheapest_label ? `the cheapest option would be ${item.cheapest_label}${item.cheapest_total_usd ? ` at ${usd(item.cheapest_total_usd)}` : ""}${item.cheapest_figure ? ` (${item.cheapest_figure})` : ""}.` : "still nothing would be feasible.",
        ),
      ),
    ),
  );
}

function rejectedSection(rejected) {
  const total = rejected.reduce((sum, group) => sum + group.count, 0);
  return h(
    "section",
    { class: "card", "aria-labelledby": "rejected-title" },
    h("h2", { id: "rejected-title" }, `Rejected candidates (${number(total)})`),
    h("p", { class: "muted" }, "Grouped by the first rule each one failed. Open a rule for examples."),
    rejected.length
      ? h(
          "ul",
          { class: "rejected" },
          rejected.map((group) =>
            h(
              "li",
              { "data-reason": group.reason },
              h(
                "details",
                {},
                h("summary", {}, h("strong", {}, words(group.reason)), ` · ${number(group.count)} candidate${group.count === 1 ? "" : "s"}`, h("span", { class: "muted" }, ` · ${REJECT_REASONS[group.reason] || ""}`)),
                h("ul", { class: "examples" }, group.examples.map((example) => h("li", {}, example))),
              ),
            ),
          ),
        )
      : h("p", {}, "No candidate was rejected."),
  );
}

function assumptionsSection(assumptions) {
  const rows = Object.entries(assumptions).map(([name, entry]) =>
    h("tr", {}, h("th", { scope: "row" }, words(name)), h("td", {}, typeof entry.value === "object" && entry.value !== null ? JSON.stringify(entry.value) : String(entry.value)), h("td", {}, entry.source)),
  );
  return h(
    "details",
    { class: "card" },
    h("summary", {}, h("h2", { class: "inline-heading" }, "Assumptions used")),
    h(
      "div",
      { class: "table-scroll" },
      h("table", { class: "data" }, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "assumption"), h("th", { scope: "col" }, "value"), h("th", { scope: "col" }, "source"))), h("tbody", {}, rows)),
    ),
  );
}

function renderAnswer(answer, body) {
  const asked = new Set(body.constraints.allowed_options?.length ? body.constraints.allowed_options : OPTION_KINDS);
  if (body.constraints.on_premises_only) ["hosted_api", "cloud"].forEach((kind) => asked.delete(kind));
  const best = answer.best_per_option || {};
  const summary = h(
    "p",
    { class: "answer-summary" },
    `${number(answer.candidates_evaluated)} candidates evaluated; ${answer.options.length} ranked option${answer.options.length === 1 ? "" : "s"} shown. Catalog version ${answer.catalog_version}, prices as of ${when(answer.as_of)}.`,
  );
  const notes = answer.notes?.length ? h("ul", { class: "notes" }, answer.notes.map((note) => h("li", {}, note))) : null;
  clear(
    state.result,
    h("h2", { id: "answer-title", tabindex: "-1" }, "The answer"),
    summary,
    notes,
    h(
      "section",
      { "aria-labelledby": "best-title" },
      h("h2", { id: "best-title" }, "Best of each kind"),
      h("div", { class: "best-grid" }, OPTION_KINDS.map((kind) => bestCard(kind, best[kind], answer, asked.has(kind)))),
    ),
    hybridInWords(best.hybrid, answer),
    h(
      "section",
      { class: "card", "aria-labelledby": "ranked-title" },
      h("h2", { id: "ranked-title" }, "Ranked options"),
      h("p", { class: "muted" }, "Cheapest over the horizon first. Open an option for its setup, cost lines, risks and catalog rows."),
      answer.options.length ? h("ol", { class: "options" }, answer.options.map(optionItem)) : h("p", {}, "No option is feasible: see the rejected candidates."),
    ),
    bindingSection(answer.binding_constraints),
    breakEvenSection(answer.break_even),
    rejectedSection(answer.rejected),
    assumptionsSection(answer.assumptions),
  );
  state.result.querySelector("#answer-title").focus({ preventScroll: true });
}
