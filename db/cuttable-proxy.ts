import net from "node:net";

// For tests of a network that goes silent: connections that stop carrying bytes without a close,
// as a lost NAT entry or a dead host does, which TCP takes minutes to notice.

/** A loopback TCP proxy to Postgres that can silence every connection it carries. */
export class CuttableProxy {
  private server = net.createServer((client) => this.accept(client));
  private cut = false;
  private muted = false;
  private readonly pairs = new Set<{ silenced: boolean; muted: boolean }>();

  /**
   * `delayMs`: every chunk is passed on that much later, both ways (a slow path, not a cut one).
   * Settable, so a test can open its connections first: a password handshake is several round trips.
   */
  constructor(
    private readonly target: { host: string; port: number },
    public delayMs = 0,
  ) {}

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    const address = this.server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    return address.port;
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const pair = { silenced: this.cut, muted: this.muted };
    this.pairs.add(pair);
    // Bytes of a silenced connection are dropped, both ways, for good: it never recovers.
    const pass = (to: net.Socket, chunk: Buffer) => {
      if (pair.silenced) return;
      if (this.delayMs === 0) to.write(chunk);
      else setTimeout(() => !pair.silenced && !to.destroyed && to.write(chunk), this.delayMs);
    };
    client.on("data", (chunk: Buffer) => pass(upstream, chunk));
    upstream.on("data", (chunk: Buffer) => !pair.muted && pass(client, chunk));
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    // A silenced connection does not even pass on a close: the far side never hears of it.
    client.on("close", () => {
      if (!pair.silenced) end();
    });
    upstream.on("close", () => {
      if (!pair.silenced) end();
    });
    client.on("error", () => {});
    upstream.on("error", () => {});
  }

  /** Every open connection, and every new one until heal, goes silent. */
  silence(): void {
    this.cut = true;
    for (const p of this.pairs) p.silenced = true;
  }

  /**
   * Every open connection, and every new one until heal, still carries what the client sends but
   * drops what the server answers: a statement runs and commits, and its answer is lost.
   */
  muteAnswers(): void {
    this.muted = true;
    for (const p of this.pairs) p.muted = true;
  }

  /** New connections pass again; the silenced ones stay dead. */
  heal(): void {
    this.cut = false;
    this.muted = false;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}
