// Drives realistic traffic at a running dashboard so it shows spend, refusals and alerts:
// steady subscribes, a burst, an abusive caller with many aliases of one inbox, and llm.chat
// calls through the HTTP API (with --api-key). Loopback only; stops by itself.
//   npm run demo:traffic -- --seconds 60 --api-key ck_...
import { parseTrafficArgs, TrafficArgsError, USAGE } from "./demo-traffic/args";
import { runTraffic, type Tally } from "./demo-traffic/run";

function report(tally: Tally, seconds: number): string {
  const lines = [
    `demo:traffic done after ${seconds} s`,
    `  subscribe (POST /api/demo/subscribe): sent ${tally.subscribe.sent}, answered 202 ${tally.subscribe.accepted}, 400 ${tally.subscribe.invalid}, other ${tally.subscribe.failed}`,
    "    every outcome answers the same 202 by design; the refusal log on the dashboard shows which gate said no.",
    `  abusive caller 203.0.113.66: ${tally.abusive.sent} of ${tally.abusive.aliases} aliases of one inbox sent, answered 202 ${tally.abusive.accepted};`,
    `    they fold into one cooldown key (${tally.abusive.key}), so at most one email went out for all of them.`,
    "  provider failures: set on the server with DEMO_PROVIDER_FAILURE_RATE (and DEMO_PROVIDER_LATENCY_MS); failed sends are released.",
  ];
  const api = tally.api;
  if (api.skipped) {
    lines.push(`  HTTP API (llm.chat): skipped, ${api.skipped}. Create a key for llm.chat on the API keys page and pass --api-key ck_...`);
  } else {
    const gates =
      Object.entries(api.refusedByGate)
        .map(([g, n]) => `${g} ${n}`)
        .join(", ") || "none";
    const errors =
      Object.entries(api.errors)
        .map(([c, n]) => `${c} x${n}`)
        .join(", ") || "none";
    lines.push(`  HTTP API (llm.chat): sent ${api.sent}, granted ${api.granted} (settled ${api.settled}, released ${api.released})`);
    lines.push(`    refused by gate: ${gates}`);
    lines.push(`    errors: ${errors}`);
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseTrafficArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof TrafficArgsError) {
      console.error(`${error.message}\n${USAGE}`);
      process.exit(2);
    }
    throw error;
  }
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const health = await fetch(new URL("/api/health", args.baseUrl), { signal: AbortSignal.timeout(5000) }).catch(() => null);
  if (!health?.ok) {
    console.error(`no healthy dashboard at ${args.baseUrl.origin} (GET /api/health). Start it first, e.g. npm run dev.`);
    process.exit(1);
  }
  console.log(
    `demo:traffic: ${args.seconds} s against ${args.baseUrl.origin}, at most ${args.maxRequests} requests${args.apiKey ? "" : " (no --api-key: the HTTP API part is skipped)"}`,
  );
  const started = Date.now();
  const tally = await runTraffic(args);
  console.log(report(tally, Math.round((Date.now() - started) / 1000)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
