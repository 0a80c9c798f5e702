// The page's entry: shows the view its path names (/ plan, /scenarios, /catalog) and keeps the API key.

import { apiKey, saveApiKey } from "./api.js";
import { startCatalog } from "./catalog.js";
import { startPlan } from "./plan.js";
import { startScenarios } from "./scenarios.js";

const VIEWS = { "/": ["plan", startPlan], "/scenarios": ["scenarios", startScenarios], "/catalog": ["catalog", startCatalog] };

function showKeyState() {
  const state = document.getElementById("api-key-state");
  const key = apiKey();
  state.textContent = key ? `(saved, ${key.slice(0, 8)}…)` : "(none)";
}

function setUpKey() {
  const form = document.getElementById("api-key-form");
  const input = document.getElementById("api-key");
  input.value = apiKey();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    saveApiKey(input.value.trim());
    showKeyState();
  });
  document.getElementById("api-key-forget").addEventListener("click", () => {
    input.value = "";
    saveApiKey("");
    showKeyState();
  });
  showKeyState();
}

function start() {
  setUpKey();
  const [name, startView] = VIEWS[window.location.pathname] || VIEWS["/"];
  for (const link of document.querySelectorAll("nav.views a[data-view]")) {
    if (link.dataset.view === name) link.setAttribute("aria-current", "page");
  }
  const section = document.getElementById(`view-${name}`);
  section.hidden = false;
  document.title = `${section.querySelector("h1").textContent} · wheretorun`;
  startView(section).catch((error) => {
    console.error(error);
    section.prepend(Object.assign(document.createElement("p"), { className: "alert", textContent: `The page could not start: ${error.message}` }));
  });
}

start();
