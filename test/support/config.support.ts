/** The configuration as a test reads it: the proxy's settings of an environment, and the message a refused one gets. */
import { loadConfig } from "../../shared/config/config.load";

/** `config.proxy` of an environment (flat variables or tables). */
export const proxySettings = (env: Record<string, unknown>) => loadConfig(env).config.proxy;

/** The message loading `env` is refused with, or "" when it loads. */
export const configRefusal = (env: Record<string, unknown>): string => {
  try {
    loadConfig(env);
  } catch (error) {
    return String((error as Error).message);
  }
  return "";
};
