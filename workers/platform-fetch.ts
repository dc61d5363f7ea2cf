/**
 * The isolate's one fetch port: the same function for the app and every FlightDO, so what is kept
 * per fetch function (the direct extractor's resolver pool) is kept once per isolate.
 */
import type { FetchFn } from "../shared/ports";

export const platformFetch: FetchFn = (input, init) => fetch(input, init);
