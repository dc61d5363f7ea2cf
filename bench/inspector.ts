/**
 * One Chrome DevTools protocol session over an inspector's WebSocket (workerd under wrangler dev,
 * Deno's --inspect): the benches' profiles and heap samples all go through it.
 */
import WebSocket from "ws";

export interface InspectorSession {
  /** One method call; with `timeoutMs`, an answer that does not come in time is taken as `{}`. */
  call<T = Record<string, unknown>>(method: string, params?: object): Promise<T>;
  close(): void;
}

/**
 * A session with the first target the inspector on `port` lists (asked up to 40 times, 250 ms
 * apart, while the runtime starts).
 * @param options.timeoutMs workerd leaves some methods unanswered: such a call answers `{}` after it
 */
export async function inspectorSession(port: number, options: { timeoutMs?: number } = {}): Promise<InspectorSession> {
  let targets: { webSocketDebuggerUrl: string }[] = [];
  for (let i = 0; i < 40 && targets.length === 0; i++) {
    try {
      targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as typeof targets;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  if (targets.length === 0) throw new Error(`no inspector target on port ${port}`);
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl, { maxPayload: 1 << 30 });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let id = 0;
  const waiting = new Map<number, (result: Record<string, unknown>) => void>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown> };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result ?? {});
  });
  const call = <T = Record<string, unknown>>(method: string, params: object = {}) =>
    new Promise<T>((resolve) => {
      const mine = ++id;
      const timer =
        options.timeoutMs === undefined ? null : setTimeout(() => waiting.get(mine)?.({}), options.timeoutMs);
      waiting.set(mine, (result) => {
        if (timer) clearTimeout(timer);
        waiting.delete(mine);
        resolve(result as T);
      });
      socket.send(JSON.stringify({ id: mine, method, params }));
    });
  return { call, close: () => socket.close() };
}
