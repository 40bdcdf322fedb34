// The tests index's filters (progressive enhancement: without JavaScript the page shows the whole list).
// Each row's text and facets are read once. A change of the filters shows the first LIMIT matching rows (a button
// shows all of them) by setting the `hidden` attribute of only the rows whose state changes, at most once per
// animation frame: with 10,000 tests a keystroke touches a few hundred rows, never the whole table
// (benchmarks/bench_site.py). The filters are kept in the address (#language=hi&bias=gender), so a filtered list
// can be linked.
(function () {
  "use strict";
  const LIMIT = 300;
  const form = document.getElementById("filters");
  const table = document.getElementById("tests");
  const count = document.getElementById("count");
  const more = document.getElementById("show-all");
  if (!form || !table || !count || !more) return;
  const rows = Array.from(table.tBodies[0].rows, (tr) => ({
    tr,
    text: tr.textContent.toLowerCase(),
    language: tr.dataset.language,
    bias: tr.dataset.bias,
    kinds: tr.dataset.kinds ? tr.dataset.kinds.split(" ") : [],
    published: Number(tr.dataset.published) > 0,
    results: Number(tr.dataset.results) > 0,
    shown: true,
  }));
  const total = rows.length;
  const fields = {
    q: document.getElementById("f-text"),
    language: document.getElementById("f-language"),
    bias: document.getElementById("f-bias"),
    kind: document.getElementById("f-kind"),
    has: document.getElementById("f-has"),
  };
  let limit = LIMIT;
  let pending = false;

  function state() {
    const s = {};
    for (const [k, el] of Object.entries(fields)) s[k] = el.value.trim();
    return s;
  }

  function apply() {
    pending = false;
    const s = state();
    const words = s.q.toLowerCase().split(/\s+/).filter(Boolean);
    let n = 0;
    for (const r of rows) {
      const match = (!s.language || r.language === s.language) && (!s.bias || r.bias === s.bias)
        && (!s.kind || r.kinds.includes(s.kind)) && (!s.has || r[s.has])
        && words.every((w) => r.text.includes(w));
      const show = match && n < limit;
      if (match) n++;
      if (show !== r.shown) {
        r.tr.hidden = !show;
        r.shown = show;
      }
    }
    const of = n === total ? `${total} test(s)` : `${n} of ${total} test(s)`;
    count.textContent = n > limit ? `${of}, the first ${limit} shown` : of;
    more.hidden = n <= limit;
    more.textContent = `Show all ${n}`;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(s)) if (v) params.set(k, v);
    const hash = params.toString();
    if (hash !== location.hash.slice(1)) history.replaceState(null, "", hash ? `#${hash}` : location.pathname);
  }

  function schedule() {
    limit = LIMIT;
    if (!pending) {
      pending = true;
      requestAnimationFrame(apply);
    }
  }

  const params = new URLSearchParams(location.hash.slice(1));
  for (const [k, el] of Object.entries(fields)) {
    const v = params.get(k);
    if (v && (el.tagName !== "SELECT" || Array.from(el.options).some((o) => o.value === v))) el.value = v;
  }
  form.addEventListener("input", schedule);
  form.addEventListener("change", schedule);
  form.addEventListener("submit", (e) => e.preventDefault());
  form.addEventListener("reset", () => setTimeout(schedule, 0));
  more.addEventListener("click", () => {
    limit = Infinity;
    apply();
  });
  form.hidden = false;
  apply();
  document.documentElement.dataset.filtersReady = "1";
})();
