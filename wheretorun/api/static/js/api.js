// Calls to the JSON API under /v1. Every request carries the API key saved in this browser
// (Authorization: Bearer), and every error answer is RFC 9457 problem+json, thrown as ApiError.

const KEY_STORAGE = "wheretorun.apiKey";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export function apiKey() {
  try {
    return window.localStorage.getItem(KEY_STORAGE) || "";
  } catch {
    return "";
  }
}

export function saveApiKey(key) {
  if (key) window.localStorage.setItem(KEY_STORAGE, key);
  else window.localStorage.removeItem(KEY_STORAGE);
}

function queryString(query) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

async function problemOf(response) {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return { title: `HTTP ${response.status}`, detail: text.slice(0, 300) || response.statusText };
  }
}

// Send a request; answer the parsed JSON, or a Blob when `as` is "blob", or the Response for "response".
export async function request(method, path, { query, body, headers = {}, as = "json" } = {}) {
  const allHeaders = { Accept: "application/json, application/problem+json", ...headers };
  const key = apiKey();
  if (key) allHeaders.Authorization = `Bearer ${key}`;
  const init = { method, headers: allHeaders };
  if (body !== undefined) {
    allHeaders["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path + queryString(query), init);
  } catch (error) {
    throw new ApiError(0, { title: "No answer", detail: `the server did not answer (${error.message})` });
  }
  if (!response.ok) throw new ApiError(response.status, await problemOf(response));
  if (as === "blob") return response.blob();
  if (as === "response") return response;
  if (response.status === 204) return null;
  return response.json();
}

// A fresh Idempotency-Key for a creating POST: a retry of it cannot create twice, and the API
// answers such a request only once its write is committed.
export function idempotencyKey() {
  if (window.crypto.randomUUID) return window.crypto.randomUUID();
  const bytes = window.crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

export const get = (path, query) => request("GET", path, { query });
export const post = (path, body, options = {}) => request("POST", path, { ...options, body });

let openapiDocument = null;

// The API's own OpenAPI document: field defaults, descriptions and examples come from it.
export async function openapi() {
  if (!openapiDocument) openapiDocument = await get("/openapi.json");
  return openapiDocument;
}

// Follow a `$ref` (and a lone allOf/anyOf wrapper) inside the OpenAPI document.
export function resolveSchema(doc, schema) {
  let current = schema;
  for (let depth = 0; current && depth < 10; depth += 1) {
    if (current.$ref) {
      const path = current.$ref.replace(/^#\//, "").split("/");
      current = path.reduce((node, part) => (node ? node[part] : undefined), doc);
    } else if (current.allOf && current.allOf.length === 1) {
      current = current.allOf[0];
    } else if (current.anyOf) {
      const real = current.anyOf.filter((item) => item.type !== "null");
      if (real.length !== 1) return current;
      current = real[0];
    } else {
      return current;
    }
  }
  return current;
}

// The JSON request body schema of an operation.
export function requestSchema(doc, path, method = "post") {
  const operation = doc.paths?.[path]?.[method];
  const content = operation?.requestBody?.content?.["application/json"];
  return content ? resolveSchema(doc, content.schema) : null;
}
