// The TypeScript SDK's Message Batches helpers against `serve`: create (one request the batch refuses:
// it asks to stream), poll with retrieve until ended, read the results, list, delete. Prints one JSON
// line per MODEL=BASE_URL argument: what the SDK saw; exit 1 if any failed.
import Anthropic from "@anthropic-ai/sdk";

const POLL_MS = 100;
const TIMEOUT_MS = 60_000;

async function run(model, baseURL) {
  const client = new Anthropic({ apiKey: "sk-ant-offline-interop", baseURL, maxRetries: 0 });
  const ask = (text, extra = {}) => ({ model, max_tokens: 256, messages: [{ role: "user", content: text }], ...extra });
  const created = await client.messages.batches.create({
    requests: [
      { custom_id: "first", params: ask("What is 2 + 2?") },
      { custom_id: "second", params: ask("Name a colour.") },
      { custom_id: "streaming", params: ask("Stream this.", { stream: true }) },
    ],
  });
  let batch = created, polls = 0;
  const started = performance.now();
  while (batch.processing_status !== "ended") {
    if (performance.now() - started > TIMEOUT_MS) throw new Error(`still ${batch.processing_status} after ${TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    batch = await client.messages.batches.retrieve(created.id);
    polls += 1;
  }
  const results = {};
  for await (const line of await client.messages.batches.results(created.id)) {
    results[line.custom_id] = line.result.type === "succeeded"
      ? { type: "succeeded", service_tier: line.result.message.usage.service_tier }
      : { type: line.result.type, error: line.result.error?.error?.type ?? null };
  }
  const listed = [];
  for await (const b of client.messages.batches.list({ limit: 1 })) listed.push(b.id);
  const deleted = await client.messages.batches.delete(created.id);
  return {
    created: created.processing_status, polls, counts: batch.request_counts, results_url: batch.results_url,
    results, listed, deleted: deleted.type,
  };
}

let failed = false;
for (const arg of process.argv.slice(2)) {
  const at = arg.indexOf("=");
  const model = arg.slice(0, at), baseURL = arg.slice(at + 1);
  let result;
  try {
    result = { model, ok: true, error: null, ...(await run(model, baseURL)) };
  } catch (e) {
    failed = true;
    result = { model, ok: false, error: `${e.name}: ${e.message}`, traceback: String(e.stack).slice(-3000) };
  }
  console.log(JSON.stringify(result));
}
process.exit(failed ? 1 : 0);
