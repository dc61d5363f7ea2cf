/**
 * The workerd processes `wrangler dev` starts in a process group (it starts two: its dev proxy, on
 * the public port, and the Worker, on a port of its own), for the benches that measure workerd
 * from outside (Linux: `ps`, /proc).
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Each workerd process of process group `group`: its pid and command line. */
export function workerdProcesses(group: number): Array<{ pid: number; args: string }> {
  const out = execFileSync("ps", ["-o", "pid=,args=", "-g", String(group)], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => /\/workerd serve /.test(line))
    .map((line) => {
      const [pid, ...args] = line.trim().split(/\s+/);
      return { pid: Number(pid), args: args.join(" ") };
    });
}

/**
 * CPU time (ms, every thread) the workerd processes of `group` have used so far, from Linux's
 * per-thread /proc/<pid>/task/<tid>/schedstat (nanoseconds on the CPU); undefined where it cannot
 * be read (off Linux).
 */
export function workerdCpuMs(group: number): number | undefined {
  let ns = 0;
  try {
    for (const { pid } of workerdProcesses(group))
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
        } catch {
          /* a thread that ended */
        }
      }
  } catch {
    return undefined;
  }
  return ns / 1e6;
}

/**
 * Page faults (minor + major) the workerd processes of `group` have taken so far, from
 * /proc/<pid>/stat; undefined where it cannot be read (off Linux).
 */
export function workerdFaults(group: number): number | undefined {
  let faults = 0;
  try {
    for (const { pid } of workerdProcesses(group)) {
      // The fields after the command's closing parenthesis: minflt is the 8th, majflt the 10th.
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      faults += Number(fields[7]) + Number(fields[9]);
    }
  } catch {
    return undefined;
  }
  return faults;
}
