import { DurableObject } from "cloudflare:workers";
export class FlightDO extends DurableObject {}
export default {
  async fetch(): Promise<Response> {
    return new Response("ok");
  },
};
