/**
 * How the agents of the session tests mark their prompt for the provider's cache: Hermes's
 * `system_and_3`, a `cache_control` breakpoint on the last block of each of the last 3 messages
 * (the system prompt carries its own).
 */
export function systemAnd3(messages: any[]): any[] {
  return messages.map((m, i) =>
    i < messages.length - 3 || typeof m.content === "string"
      ? m
      : {
          ...m,
          content: m.content.map((b: any, j: number) =>
            j === m.content.length - 1 ? { ...b, cache_control: { type: "ephemeral" } } : b,
          ),
        },
  );
}
