/**
 * OpenAI Responses (`/v1/responses`): the conversation is `body.input`, a list of items, seen as
 * Chat Completions messages so every image and breakpoint operation is Chat's (`OPENAI_CHAT`).
 */
import { responsesToolResults } from "./tool-result-blocks";
import type { WireFormat } from "./format";
import { asRecord as record, COMPUTER_SCREENSHOT_ROLE } from "./image-blocks";
import { OPENAI_CHAT } from "./openai.chat";

/** A computer_call_output's screenshot URL (a data: URL inline), or null (a file_id, or none). */
function screenshotUrl(item: Record<string, unknown>): string | null {
  const output = record(item.output);
  return output?.type === "computer_screenshot" && typeof output.image_url === "string" ? output.image_url : null;
}

/** Responses items that carry a tool's answer in `output` (a string, or a list of input parts). */
const TOOL_OUTPUTS = new Set(["function_call_output", "custom_tool_call_output"]);

/** Responses items the model wrote (besides an assistant message): a run of them answered one request. */
const MODEL_ITEMS = new Set([
  "reasoning",
  "function_call",
  "custom_tool_call",
  "computer_call",
  "local_shell_call",
  "shell_call",
  "apply_patch_call",
  "web_search_call",
  "file_search_call",
  "code_interpreter_call",
  "image_generation_call",
  "mcp_call",
  "mcp_list_tools",
  "mcp_approval_request",
]);

/**
 * Responses: `body.input` items seen as chat messages, so one eviction module reads both. A
 * `function_call_output` or `custom_tool_call_output` whose `output` is a list of parts is a
 * `role: "tool"` message (its images are tool images); a message item keeps its role and parts. What the model wrote for one request
 * (reasoning, calls, its message) is a run of items: the run's first item is the one `assistant`
 * message Chat Completions would have (the eviction counts requests by them), the rest are
 * messages without a role it counts. Any other item is a message without images. Edits go back to
 * the items they came from.
 */
export const OPENAI_RESPONSES: WireFormat = {
  ...OPENAI_CHAT,
  toolResults: responsesToolResults,
  messagesOf: (body) => {
    if (!Array.isArray(body.input)) return null;
    let answering = false; // inside a run of the model's items
    return body.input.map((raw) => {
      const item = record(raw);
      const message = item && (item.type === "message" || (item.type === undefined && typeof item.role === "string"));
      const fromModel = (message && item.role === "assistant") || MODEL_ITEMS.has(item?.type as string);
      const opensRun = fromModel && !answering;
      answering = fromModel;
      if (TOOL_OUTPUTS.has(item?.type as string)) return { role: "tool", content: item!.output };
      if (item?.type === "computer_call_output") {
        const url = screenshotUrl(item);
        return {
          role: COMPUTER_SCREENSHOT_ROLE,
          content: url === null ? null : [{ type: "input_image", image_url: url }],
        };
      }
      if (message) return { role: opensRun || !fromModel ? item.role : "other", content: item.content };
      return { role: opensRun ? "assistant" : "other", content: null };
    });
  },
  withMessages: (body, messages) => {
    const before = OPENAI_RESPONSES.messagesOf(body)!;
    const input = (body.input as unknown[]).map((raw, i) => {
      const content = record(messages[i])?.content;
      if (record(raw)?.type === "computer_call_output") {
        // Its view is made anew on every read: compare the screenshot's URL, not the array.
        const url = Array.isArray(content) ? record(content[0])?.image_url : undefined;
        const item = record(raw)!;
        if (typeof url !== "string" || url === screenshotUrl(item)) return raw;
        return { ...item, output: { ...record(item.output), image_url: url } };
      }
      if (content === record(before[i])?.content) return raw;
      const item = record(raw)!;
      return TOOL_OUTPUTS.has(item.type as string) ? { ...item, output: content } : { ...item, content };
    });
    return { ...body, input };
  },
};
