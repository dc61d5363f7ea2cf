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
  return cpuMsOf(workerdProcesses(group).map(({ pid }) => pid));
}

/**
 * CPU time (ms) every process of `group` has used so far: wrangler's own Node process (which
 * relays and files the Worker's log lines) with its workerd processes; undefined off Linux.
 */
export function processGroupCpuMs(group: number): number | undefined {
  const out = execFileSync("ps", ["-o", "pid=", "-g", String(group)], { encoding: "utf8" });
  return cpuMsOf(
    out
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map(Number),
  );
}

/**
 * The CPU time (ms) of `workerdCpuMs` by kind of thread: each process's main thread (its JavaScript
 * and the GC work done there), V8's worker threads ("V8 DefaultWorke": concurrent marking,
 * sweeping, background compiles) and the rest; undefined off Linux.
 */
export function workerdThreadCpuMs(group: number): { main: number; v8: number; other: number } | undefined {
  const split = { main: 0, v8: 0, other: 0 };
  try {
    for (const { pid } of workerdProcesses(group))
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
          const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8");
          const kind = Number(tid) === pid ? "main" : name.startsWith("V8") ? "v8" : "other";
          split[kind] += ns / 1e6;
        } catch {
          /* a thread that ended */
        }
      }
  } catch {
    return undefined;
  }
  return split;
}

/** CPU ms processes `pids` have used so far, every thread (Linux /proc schedstat); undefined off Linux. */
export function cpuMsOf(pids: number[]): number | undefined {
  let ns = 0;
  try {
    for (const pid of pids)
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
 * Page faults (minor, first touches of fresh pages, + major) the workerd processes of `group` have
 * taken so far, from /proc/<pid>/stat; undefined off Linux.
 */
export function workerdFaults(group: number): number | undefined {
  let faults = 0;
  try {
    for (const { pid } of workerdProcesses(group)) {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      // Fields after the parenthesised command name, which may hold spaces: minflt is the 8th, majflt the 10th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      faults += Number(fields[7]) + Number(fields[9]);
    }
  } catch {
    return undefined;
  }
  return faults;
}
