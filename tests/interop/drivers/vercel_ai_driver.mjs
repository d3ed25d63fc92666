// The Vercel AI SDK (ai + @ai-sdk/anthropic) as its docs show it: createAnthropic with the base URL that
// ends in /v1 (serve's banner prints it); a conversation of two turns with generateText (a tool, a step
// limit), then another with streamText, its text read from textStream. Same contract as common.py: one
// JSON line per MODEL=BASE_URL argument (the URL without /v1, as serve exports it).
import { generateText, streamText, tool, jsonSchema, stepCountIs } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { forEachModel } from "./common.mjs";

const TASK = "What is the weather in the two cities I care about? Use the tool.";
const FOLLOW_UP = "And tomorrow?";

// Each of generateText and streamText holds its own conversation: streamText sends its tools with
// eager_input_streaming: true and generateText without it, so one history carried from the one to the other
// changes the tools mid-conversation, which on the models that bind thinking to its prefix is an edit
// (the emulator refuses it; whether the API counts that field is not documented).
async function conversation(model, tools, streaming) {
  const messages = [];
  for (const prompt of [TASK, FOLLOW_UP]) {
    messages.push({ role: "user", content: prompt });
    if (streaming) {
      const result = streamText({ model, tools, messages, stopWhen: stepCountIs(8) });
      let text = "";
      for await (const piece of result.textStream) text += piece;
      if (!text || (await result.finishReason) !== "stop") throw new Error(`streamText ended with ${await result.finishReason}`);
      messages.push(...(await result.responseMessages));
    } else {
      const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(8) });
      if (result.finishReason !== "stop") throw new Error(`generateText finished with ${result.finishReason}`);
      messages.push(...result.responseMessages);  // every step's messages, tool calls and results included
    }
  }
}

async function run(model, baseURL) {
  const anthropic = createAnthropic({ apiKey: "sk-ant-offline-interop", baseURL: `${baseURL}/v1` });
  let calls = 0;
  const tools = {
    get_weather: tool({
      description: "The weather in a city.",
      inputSchema: jsonSchema({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
      execute: async ({ city }) => { calls += 1; return `sunny in ${city}`; },
    }),
  };
  await conversation(anthropic(model), tools, false);
  await conversation(anthropic(model), tools, true);
  return calls;
}

await forEachModel(run);
