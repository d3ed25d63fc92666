// What every Node driver shares (the contract of common.py): one JSON line per MODEL=BASE_URL
// argument, {model, ok, error, tool_calls, seconds}, and exit 1 if any model failed.
export async function forEachModel(run) {
  let failed = false;
  for (const arg of process.argv.slice(2)) {
    const at = arg.indexOf("=");
    const model = arg.slice(0, at), baseURL = arg.slice(at + 1);
    const started = performance.now();
    let result;
    try {
      result = { model, ok: true, error: null, tool_calls: await run(model, baseURL) };
    } catch (e) {
      failed = true;
      result = { model, ok: false, error: `${e.name}: ${e.message}`, traceback: String(e.stack).slice(-3000), tool_calls: null };
    }
    console.log(JSON.stringify({ ...result, seconds: (performance.now() - started) / 1000 }));
  }
  process.exit(failed ? 1 : 0);
}
