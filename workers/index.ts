/** The Workers entry: builds the app from bindings (once per env object) and exports the DOs. */
import { env as startEnv } from "cloudflare:workers";
import type { Hono } from "hono";
import { createApp } from "../shared/app";
import { reportConfigAtStart, workersDeps } from "./deps";
import type { WorkerEnv } from "./env";

export { FlightDO } from "./flight.do";
export { SessionDO } from "./session.do";

reportConfigAtStart(startEnv as unknown as WorkerEnv);

const apps = new WeakMap<object, Hono<any>>();

export default {
  fetch(request: Request, env: WorkerEnv, ctx: ExecutionContext): Response | Promise<Response> {
    let app = apps.get(env);
    if (!app) {
      app = createApp(workersDeps(env));
      apps.set(env, app);
    }
    return app.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<WorkerEnv>;
