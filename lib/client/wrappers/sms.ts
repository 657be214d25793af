// Twilio SMS (the `twilio` package): messages.create reserved per message with its recipient as
// the destination (so the endpoint's cooldown and per-destination ceilings apply), at the segments
// its body takes, and settled at the segments Twilio reports (`num_segments`).
//
//   const twilio = withCeilings(Twilio(sid, token), { ceilings, endpoint: "sms.password-reset" });
//   await twilio.messages.create({ to: "+15551234567", from, body: "Your code is 123456" });
//
// Segments: a body in GSM-7 takes 160 septets in one segment, else 153 a segment (the extension
// characters ^{}\[~]|€ take two and are never split); any other character makes it UCS-2: 70
// UTF-16 units in one segment, else 67 (a surrogate pair never split). Twilio's Smart Encoding
// may send fewer, never more: settle gives the difference back.
import { hold, type GuardOptions } from "./guard.js";
import { withCallOptions, type WithCeilings } from "./wrap.js";

export { CeilingsRefusedError, WorstCaseError, type CallOptions } from "./guard.js";

const GSM_BASIC = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
const GSM_EXTENDED = "^{}\\[~]|€\f";
const basic = new Set(GSM_BASIC);
const extended = new Set(GSM_EXTENDED);

export type Encoding = "GSM-7" | "UCS-2";

/** The encoding a body is sent in and the segments it takes. */
export function smsSegments(body: string): { encoding: Encoding; segments: number } {
  const chars = [...body];
  if (chars.every((c) => basic.has(c) || extended.has(c))) {
    const sizes = chars.map((c) => (extended.has(c) ? 2 : 1));
    return { encoding: "GSM-7", segments: pack(sizes, 160, 153) };
  }
  return {
    encoding: "UCS-2",
    segments: pack(
      chars.map((c) => c.length),
      70,
      67,
    ),
  };
}

/** Segments for characters of the given sizes: one if all fit in `single`, else packed `multi` a segment without splitting one. */
function pack(sizes: number[], single: number, multi: number): number {
  const total = sizes.reduce((a, b) => a + b, 0);
  if (total <= single) return 1;
  let segments = 1;
  let used = 0;
  for (const size of sizes) {
    if (used + size > multi) {
      segments++;
      used = 0;
    }
    used += size;
  }
  return segments;
}

export type SmsWrapOptions = GuardOptions & {
  /** What the endpoint counts: `segments` (default, as Twilio bills) or `messages` (one a message). */
  unit?: "segments" | "messages";
};

type CreateParams = { to?: string; body?: string; mediaUrl?: unknown };

/** The Twilio client with messages.create reserved per recipient and settled at its segments. */
export function withCeilings<C extends object>(client: C, options: SmsWrapOptions): WithCeilings<C> {
  return withCallOptions(client, {
    "messages.create": async (call, original, [rawParams, ...rest]) => {
      const params = rawParams as CreateParams;
      const segments = options.unit === "messages" ? 1 : smsSegments(params.body ?? "").segments;
      const held = await hold(options, { ...call, destination: call?.destination ?? params.to }, { amount: segments });
      let message: { numSegments?: string | number; num_segments?: string | number; status?: string };
      try {
        message = (await original(rawParams, ...rest)) as typeof message;
      } catch (error) {
        await held.release();
        throw error;
      }
      const reported = Number(message.numSegments ?? message.num_segments);
      if (options.unit === "messages") await held.settle({ amount: 1 });
      else await (Number.isSafeInteger(reported) && reported > 0 ? held.settle({ amount: reported }) : held.keepWorstCase());
      return message;
    },
  });
}
