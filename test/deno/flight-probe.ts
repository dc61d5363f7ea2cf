/**
 * deno/main.ts, unchanged, with one route more for tests over HTTP: `GET /__test/flight-joiners?key=K`
 * answers `{joiners}`, how many callers of the flight key K wait in this process on the one paying
 * (`SingleFlight.joiners`, the count workerd tests ask the FlightDO for by RPC). A test holds the
 * provider's answer at an emulator gate until every concurrent caller is counted here, instead of
 * giving them a fixed time to arrive. Started by `startDeno({ flightProbe: true })`
 * (test/support/deno-service.ts). It observes only: every other request reaches the entry's own
 * handler, and the flight is the entry's own (found by its first call).
 */
import { FlightCoordinator } from "../../shared/web/flight";

const coordinators = new Set<FlightCoordinator>();
const run = FlightCoordinator.prototype.run;
FlightCoordinator.prototype.run = function (this: FlightCoordinator, ...args: Parameters<typeof run>) {
  coordinators.add(this);
  return run.apply(this, args);
};

const serve = Deno.serve;
Deno.serve = ((options: Deno.ServeTcpOptions, handler: Deno.ServeHandler) =>
  serve(options, async (request, info) => {
    const url = new URL(request.url);
    if (url.pathname !== "/__test/flight-joiners") return handler(request, info);
    const key = url.searchParams.get("key") ?? "";
    let joiners = 0;
    for (const coordinator of coordinators) joiners += await coordinator.joiners(key);
    return Response.json({ joiners });
  })) as typeof Deno.serve;

await import("../../deno/main.ts");
