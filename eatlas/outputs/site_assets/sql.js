// The SQL box: DuckDB-WASM runs the reader's query in this browser over the tables beside the page (data/*.arrow,
// the rows of data/*.parquet as Arrow IPC, which DuckDB-WASM reads with no extension to download). Nothing is
// loaded until the first query: then apache-arrow's browser build (with its integrity hash) and the module
// "@duckdb/duckdb-wasm" (the page's import map resolves it to the pinned bundle, CDN or this site, with its
// integrity hash); the worker and the wasm are fetched with theirs and started from Blob URLs, so a worker from
// another origin may run and nothing unchecked is run. The tables are read once into memory; after that DuckDB may read no
// file at all (enable_external_access off, configuration locked), and the page's Content-Security-Policy lets it
// connect to nothing but this site. Results are written into the page as text, never as markup.
const config = JSON.parse(document.getElementById("site-config").textContent);
const examples = JSON.parse(document.getElementById("examples").textContent);
const form = document.getElementById("sql-form");
const box = document.getElementById("sql");
const runButton = document.getElementById("run");
const statusLine = document.getElementById("status");
const result = document.getElementById("result");
let connection = null;
let busy = false;

function status(text, error = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle("error", error);
}

async function blobUrl(url, type) {
  const response = await fetch(url, { integrity: config.integrity[url], credentials: "omit" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return URL.createObjectURL(new Blob([await response.arrayBuffer()], { type }));
}

function loadScript(src, integrity) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = src;
    s.integrity = integrity;
    s.crossOrigin = "anonymous";
    s.onload = resolve;
    s.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.appendChild(s);
  });
}

async function start() {
  if (location.protocol === "file:") {
    throw new Error("the SQL box needs the site served over HTTP (e.g. python -m http.server in its folder)");
  }
  status("Starting DuckDB-WASM…");
  let duckdb;
  try {
    if (!globalThis.Arrow) await loadScript(config.arrow.url, config.arrow.integrity);
    duckdb = await import("@duckdb/duckdb-wasm");
  } catch (e) {
    // a site built without DuckDB-WASM, out of reach of the CDN: say what makes it work
    if (config.fix) throw new Error(`DuckDB-WASM could not be loaded from jsDelivr (${e && e.message ? e.message : e}). `
      + `This site was built without its own copy. To query it offline, ${config.fix}`);
    throw e;
  }
  if (config.ehOnly && !(await duckdb.getPlatformFeatures()).wasmExceptions) {
    throw new Error(`this site's DuckDB-WASM needs ${config.ehNote}; this browser lacks it`);
  }
  const bundle = await duckdb.selectBundle(config.bundles);
  const worker = new Worker(await blobUrl(bundle.mainWorker, "text/javascript"));
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(await blobUrl(bundle.mainModule, "application/wasm"));
  const conn = await db.connect();
  await conn.query("SET autoinstall_known_extensions = false");
  await conn.query("SET autoload_known_extensions = false");
  let n = 0;
  for (const t of config.tables) {
    status(`Reading the tables (${++n} of ${config.tables.length}: ${t.name})…`);
    const response = await fetch(t.url, { credentials: "omit" });
    if (!response.ok) throw new Error(`${t.url}: HTTP ${response.status}`);
    // Arrow IPC, which DuckDB-WASM reads with no extension (its parquet reader is one it would download)
    await conn.insertArrowFromIPCStream(new Uint8Array(await response.arrayBuffer()), { name: t.name, create: true });
  }
  await conn.query("SET enable_external_access = false");
  await conn.query("SET lock_configuration = true");
  return conn;
}

function cell(value, type) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") {
    if (type && /^Timestamp|^Date/.test(type) && Number.isFinite(value)) {
      return new Date(value).toISOString().replace("T", " ").replace(/(\.000)?Z$/, "");
    }
    return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(6)));
  }
  if (typeof value === "bigint" || typeof value === "boolean") return String(value);
  if (typeof value === "string") return value;
  if (value instanceof Date) return value.toISOString();
  if (typeof value.toJSON === "function") value = value.toJSON();
  if (typeof value.toArray === "function") value = Array.from(value.toArray());
  return JSON.stringify(value, (k, v) => (typeof v === "bigint" ? v.toString() : v));
}

function show(table) {
  const fields = table.schema.fields;
  const n = table.numRows;
  const shown = Math.min(n, config.maxRows);
  const t = document.createElement("table");
  t.className = "query";
  const caption = t.createCaption();
  caption.textContent = `${n} row(s)` + (shown < n ? `, the first ${shown} shown` : "");
  const types = fields.map((f) => String(f.type));
  const numeric = types.map((ty) => /^(Int|Uint|Float|Decimal)/.test(ty));
  const head = t.createTHead().insertRow();
  fields.forEach((f, i) => {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = f.name;
    if (numeric[i]) th.className = "num";
    head.appendChild(th);
  });
  const body = t.createTBody();
  const columns = fields.map((f, i) => table.getChildAt(i));
  for (let r = 0; r < shown; r++) {
    const tr = body.insertRow();
    for (let c = 0; c < fields.length; c++) {
      const td = tr.insertCell();
      const v = columns[c].get(r);
      const text = cell(v, types[c]);
      td.textContent = text;
      if (numeric[c]) td.className = "num";
      else if (text.length <= 48) td.className = "short";     // an id, a model, a label: on one line
    }
  }
  result.replaceChildren(t);
  return n;
}

async function run() {
  if (busy) return;
  busy = true;
  runButton.disabled = true;
  const started = performance.now();
  try {
    if (!connection) connection = start();
    const conn = await connection;
    status("Running…");
    const table = await conn.query(box.value);
    const n = show(table);
    status(`${n} row(s) in ${Math.round(performance.now() - started)} ms`);
  } catch (e) {
    if (connection && !(await connection.catch(() => null))) connection = null;
    result.replaceChildren();
    status(`Error: ${e && e.message ? e.message : e}`, true);
  } finally {
    busy = false;
    runButton.disabled = false;
  }
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  run();
});
runButton.addEventListener("click", run);
box.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run();
  }
});
for (const b of document.querySelectorAll("button.example")) {
  b.addEventListener("click", () => {
    box.value = examples[Number(b.dataset.example)].sql;
    run();
  });
}
if (location.hash.length > 1) {
  try {
    box.value = decodeURIComponent(location.hash.slice(1));
  } catch (e) {
    /* an address that is not a query: keep the example */
  }
}
document.documentElement.dataset.sqlReady = "1";
