// The TypeScript SDK (@anthropic-ai/sdk): models.list() and models.retrieve(), then messages.create
// in a tool loop, the assistant content resent as it came (thinking blocks included). Same contract as common.py: one JSON line per
// MODEL=BASE_URL argument, exit 1 if any failed.
import Anthropic from "@anthropic-ai/sdk";
import { forEachModel } from "./common.mjs";

const TASK = "What is the weather in the two cities I care about? Use the tool.";
const FOLLOW_UP = "And tomorrow?";
const TOOLS = [{
  name: "get_weather", description: "The weather in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];

async function run(model, baseURL) {
  const client = new Anthropic({ apiKey: "sk-ant-offline-interop", baseURL });
  // GET /v1/models (paged) and /v1/models/{id}: the listing must name the model the loop uses.
  const listed = [];
  for await (const info of client.models.list()) listed.push(info.id);
  if (!listed.includes(model)) throw new Error(`models.list() does not name ${model}: ${listed.join(", ")}`);
  const retrieved = await client.models.retrieve(model);
  if (retrieved.id !== model) throw new Error(`models.retrieve(${model}) answered ${retrieved.id}`);
  const messages = [];
  let calls = 0;
  for (const prompt of [TASK, FOLLOW_UP]) {
    messages.push({ role: "user", content: prompt });
    for (;;) {
      const answer = await client.messages.create({ model, max_tokens: 4096, tools: TOOLS, messages });
      messages.push({ role: "assistant", content: answer.content });
      const uses = answer.content.filter((b) => b.type === "tool_use");
      if (uses.length === 0) break;
      calls += uses.length;
      messages.push({ role: "user", content: uses.map((u) => (
        { type: "tool_result", tool_use_id: u.id, content: `sunny in ${u.input.city}` })) });
    }
  }
  return calls;
}

await forEachModel(run);
