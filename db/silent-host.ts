import net from "node:net";

// For tests of a host in a multi-host URL that accepts TCP and never answers.

/** A TCP server that accepts connections and never sends a byte: a machine that died silently. */
export class SilentHost {
  private readonly server = net.createServer((socket) => {
    this.open.add(socket);
    socket.on("close", () => this.open.delete(socket));
    socket.on("error", () => {});
    // Read and dropped, so that a client's close is seen.
    socket.resume();
  });
  readonly open = new Set<net.Socket>();

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    const address = this.server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    return address.port;
  }

  close(): Promise<void> {
    for (const s of this.open) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}
