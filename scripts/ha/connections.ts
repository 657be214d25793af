import { readFileSync, readdirSync, readlinkSync } from "node:fs";

// For the chaos test: how many TCP connections a process holds to the database nodes, read from
// /proc (Linux) on the client's side, so a connection the server no longer sees still counts.

/** Established TCP connections of process `pid` to any of `ports` on loopback; 0 once it is gone. */
export function connectionsOf(pid: number, ports: number[]): number {
  let inodes: Set<string>;
  try {
    inodes = new Set(
      readdirSync(`/proc/${pid}/fd`)
        .map((fd) => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return "";
          }
        })
        .filter((link) => link.startsWith("socket:["))
        .map((link) => link.slice("socket:[".length, -1)),
    );
  } catch {
    return 0;
  }
  let n = 0;
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      const remote = f[2] ?? "";
      // State 01 is ESTABLISHED; the inode is the tenth field.
      if (f[3] !== "01" || !inodes.has(f[9] ?? "")) continue;
      if (ports.includes(parseInt(remote.slice(remote.indexOf(":") + 1), 16))) n++;
    }
  }
  return n;
}
