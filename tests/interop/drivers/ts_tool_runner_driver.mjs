// The TypeScript SDK's tool runner, client.beta.messages.toolRunner({...}), as its docs show it: message
// threads on (the default), iterated with for await until the model stops calling tools. The policy serving
// it calls four tools in a row, so each run is a create and four continues. INTEROP_MODE=recovery adds, each
// in a run of its own, a system with four cache_control blocks (thread_unsupported_request: the runner goes on
// without a thread) and a tool that outlasts serve --thread-ttl once (thread_not_found: the runner replays the
// history under a new thread). Same contract as common.py: one JSON line per MODEL=BASE_URL argument.
import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { forEachModel } from "./common.mjs";

const TASK = "What is the weather in the two cities I care about? Use the tool.";
const MODE = process.env.INTEROP_MODE ?? "plain";
const OUTLAST = Number(process.env.INTEROP_OUTLAST ?? "4") * 1000;
const MARKED = [0, 1, 2, 3].map((i) => ({
  type: "text", text: `Rule ${i}: answer briefly. `.repeat(30), cache_control: { type: "ephemeral" },
}));

function weatherTool(calls, slowOnce) {
  return betaTool({
    name: "get_weather", description: "The weather in a city.",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    run: async ({ city }) => {
      calls.push(city);
      if (slowOnce && calls.length === 2) await new Promise((done) => setTimeout(done, OUTLAST));
      return `sunny in ${city}`;
    },
  });
}

async function conversation(client, model, extra = {}, slowOnce = false) {
  const calls = [];
  const runner = client.beta.messages.toolRunner({
    model, max_tokens: 4096, tools: [weatherTool(calls, slowOnce)],
    messages: [{ role: "user", content: TASK }], ...extra,
  });
  let last;
  for await (const message of runner) last = message;
  if (last.stop_reason !== "end_turn") throw new Error(`the runner ended on ${last.stop_reason}`);
  return calls.length;
}

async function run(model, baseURL) {
  const client = new Anthropic({ apiKey: "sk-ant-offline-interop", baseURL, logLevel: "warn" });
  let calls = await conversation(client, model);
  if (MODE === "recovery") {
    calls += await conversation(client, model, { system: MARKED });
    calls += await conversation(client, model, {}, true);
  }
  return calls;
}

await forEachModel(run);
