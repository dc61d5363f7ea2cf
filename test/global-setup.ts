/** Starts the loopback provider emulator once for the workers project and hands its URL over. */
import type { TestProject } from "vitest/node";
import { startEmulator } from "./emulator/server";

declare module "vitest" {
  export interface ProvidedContext {
    emulatorUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const emulator = await startEmulator();
  project.provide("emulatorUrl", emulator.url);
  return () => emulator.close();
}
