// apache-arrow as the ES module that @duckdb/duckdb-wasm's browser bundle imports ("apache-arrow", mapped here by
// the SQL page's import map). The page loads apache-arrow's own browser build (Arrow.es2015.min.js, pinned, with
// its integrity hash), which defines the global Arrow; this module hands its names on. The names are those the
// bundle uses (tests/test_site.py checks them against the bundle).
const A = globalThis.Arrow;
if (!A) {
  throw new Error("apache-arrow did not load (Arrow.es2015.min.js)");
}
export const {
  DataType, Field, RecordBatch, RecordBatchReader, RecordBatchStreamWriter, Schema, Table, Type, Vector,
  makeTable, tableFromArrays, tableFromIPC, tableToIPC, util,
} = A;
