import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { addDays, dayIn, isProviderDay, startOfDay } from "./days";

// A local stand-in for the providers' usage APIs, for tests and the e2e (the real ones cannot be
// reached from here). It is a real HTTP server on 127.0.0.1 serving the documented shapes from a
// dataset: OpenAI's usage/completions and costs pages of daily buckets (`next_page`, `has_more`),
// Anthropic's usage_report/messages and cost_report (cents as decimal strings), Twilio's daily
// usage records (`next_page_uri`), SendGrid's daily stats (limit/offset), Postmark's outbound sends
// (US Eastern days, per stream or tag) and SES's GetSendStatistics XML behind a SigV4 signature it
// verifies as AWS does, from the request as it arrived (sesSignatureProblem, written apart from the
// client's signer so a mistake there is not repeated here). It checks each provider's credential
// the way the provider does (401 with the provider's JSON error otherwise, 403 with SES's XML one),
// can fail the next requests on purpose (a 429 with Retry-After, an HTML 500 page, any status and
// body), and keeps every request it saw.

export const FAKE_KEYS = {
  openai: "sk-admin-fake-openai-0123456789",
  anthropic: "sk-ant-admin01-fake-anthropic-0123456789",
  twilio: { accountSid: `AC${"a1".repeat(16)}`, authToken: "fake-twilio-auth-token-0123" },
  sendgrid: "SG.fake-sendgrid-key.0123456789",
  postmark: "fake-postmark-server-token-0123",
  ses: { accessKeyId: "AKIAFAKESES0123456789", secretAccessKey: "fake/ses/secret+key0123456789" },
} as const;

/** The SES credential as a source's variable holds it. */
export const FAKE_SES_SECRET = `${FAKE_KEYS.ses.accessKeyId}:${FAKE_KEYS.ses.secretAccessKey}`;

export type FakeOpenAIRow = {
  day: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  inputCachedTokens?: number;
  costValue?: number | string;
  lineItem?: string;
  currency?: string;
  projectId?: string;
};
export type FakeAnthropicRow = {
  day: string;
  model: string;
  uncachedInputTokens: number;
  outputTokens: number;
  cacheReadInputTokens?: number;
  cacheCreation5mInputTokens?: number;
  cacheCreation1hInputTokens?: number;
  /** Cents as a decimal string, as the cost report sends it ("123.45" is $1.2345). */
  costCents?: string;
  /** The cost row's token_type ("cache_read_input_tokens"); null when not given. */
  tokenType?: string;
  description?: string;
  currency?: string;
  workspaceId?: string;
};
export type FakeTwilioRow = {
  day: string;
  category: string;
  count: number;
  usage?: number | string;
  price?: number | string;
  priceUnit?: string;
  countUnit?: string;
  usageUnit?: string;
};
export type FakeSendGridDay = { day: string; requests: number; delivered?: number; subuser?: string };
/** Mail sent on a US Eastern day, in a message stream ("outbound" unless said), with a tag or none. */
export type FakePostmarkDay = { day: string; sent: number; stream?: string; tag?: string };
/** One 15-minute SES point: its start (UTC) and the messages sent in it. */
export type FakeSesPoint = { at: string; deliveryAttempts: number; bounces?: number };
export type FakeFailure = { status: 429; retryAfter: number | string } | { status: number; html: true } | { status: number; body: string };
export type FakeRequest = { method: string; path: string; query: Record<string, string[]>; headers: IncomingHttpHeaders };

export type FakeProvider = {
  url: string;
  requests: FakeRequest[];
  setOpenAI: (rows: FakeOpenAIRow[]) => void;
  setAnthropic: (rows: FakeAnthropicRow[]) => void;
  setTwilio: (rows: FakeTwilioRow[]) => void;
  setSendGrid: (days: FakeSendGridDay[]) => void;
  setPostmark: (days: FakePostmarkDay[]) => void;
  setSes: (points: FakeSesPoint[]) => void;
  /** A usage file served at `${url}${path}`, for file sources with a URL location. */
  setFile: (path: string, text: string) => void;
  /** The next `n` requests, whatever their path, answer this failure. */
  failNext: (n: number, failure: FakeFailure) => void;
  close: () => Promise<void>;
};

export type FakeProviderOptions = {
  /** Buckets (OpenAI, Anthropic) or records (Twilio) per page at most; small values exercise pagination. */
  pageSize?: number;
  keys?: { openai?: string; anthropic?: string; twilio?: { accountSid: string; authToken: string } };
  /** The zone whose midnights the buckets start at (the real APIs: UTC). */
  timeZone?: string;
};

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
};

const HTML_500 =
  '<!DOCTYPE html><html><head><title>500 Internal Server Error</title><style>body{font-family:sans-serif}</style></head><body><h1>Internal Server Error</h1><p>The upstream server crashed while handling your request.</p><script>var trace="x"</script></body></html>';

const cursorOf = (offset: number) => `page_${Buffer.from(`offset:${offset}`).toString("base64")}`;
function offsetOf(page: string | undefined): number {
  if (!page) return 0;
  const m = /^offset:(\d+)$/.exec(Buffer.from(page.replace(/^page_/, ""), "base64").toString("utf8"));
  return m ? Number(m[1]) : -1;
}

/** The zone days overlapping [start, end), each with the instant it starts at. */
function bucketsOf(start: Date, end: Date, zone: string): { day: string; start: Date; end: Date }[] {
  const out: { day: string; start: Date; end: Date }[] = [];
  if (!(start < end)) return out;
  for (let day = dayIn(start, zone); startOfDay(day, zone) < end && out.length < 400; day = addDays(day, 1)) {
    out.push({ day, start: startOfDay(day, zone), end: startOfDay(addDays(day, 1), zone) });
  }
  return out;
}

const sha256Hex = (data: string) => createHash("sha256").update(data, "utf8").digest("hex");

/** RFC 3986 encoding byte by byte, as AWS canonicalises a query: only A-Z a-z 0-9 - _ . ~ stay. */
function awsEncode(text: string): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Why SES would refuse this request's signature, or null: AWS's check, from the request as it
 * arrived. The Authorization header names the key, the scope and the signed headers; the canonical
 * request is rebuilt from the method, the raw path, the raw query (each name and value decoded,
 * encoded again, sorted by bytes) and the signed headers' values as received (the Host with its
 * port), and its signature computed with the fake secret must be the one sent.
 */
function sesSignatureProblem(method: string, rawUrl: string, headers: IncomingHttpHeaders): { code: string; message: string } | null {
  const mismatch = { code: "SignatureDoesNotMatch", message: "The request signature we calculated does not match the signature you provided." };
  const auth =
    /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      headers.authorization ?? "",
    );
  if (!auth) return { code: "IncompleteSignature", message: "Authorization header requires Credential, SignedHeaders and Signature." };
  const [, keyId = "", day = "", region = "", service = "", signedHeaders = "", signature = ""] = auth;
  if (keyId !== FAKE_KEYS.ses.accessKeyId) return { code: "InvalidClientTokenId", message: "The security token included in the request is invalid." };
  const stamp = typeof headers["x-amz-date"] === "string" ? headers["x-amz-date"] : "";
  if (!/^\d{8}T\d{6}Z$/.test(stamp) || !stamp.startsWith(day))
    return { code: "IncompleteSignature", message: "Date must be in ISO-8601 'basic format' and match the credential scope." };
  if (service !== "ses") return { code: "SignatureDoesNotMatch", message: `Credential should be scoped to correct service: 'ses'.` };
  const names = signedHeaders.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date") || names.join(";") !== [...names].sort().join(";")) return mismatch;
  const canonicalHeaders = names
    .map(
      (n) =>
        `${n}:${String(headers[n] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const at = rawUrl.indexOf("?");
  const path = at < 0 ? rawUrl : rawUrl.slice(0, at);
  const pairs = (at < 0 ? "" : rawUrl.slice(at + 1))
    .split("&")
    .filter((p) => p !== "")
    .map((p) => {
      const eq = p.indexOf("=");
      const decode = (x: string) => decodeURIComponent(x.replace(/\+/g, " "));
      return [awsEncode(decode(eq < 0 ? p : p.slice(0, eq))), awsEncode(decode(eq < 0 ? "" : p.slice(eq + 1)))] as const;
    })
    .sort(([ka, va], [kb, vb]) => Buffer.compare(Buffer.from(ka), Buffer.from(kb)) || Buffer.compare(Buffer.from(va), Buffer.from(vb)));
  const canonical = [method, path, pairs.map(([k, v]) => `${k}=${v}`).join("&"), canonicalHeaders, signedHeaders, sha256Hex("")].join("\n");
  const toSign = ["AWS4-HMAC-SHA256", stamp, `${day}/${region}/${service}/aws4_request`, sha256Hex(canonical)].join("\n");
  let key: Buffer = Buffer.from(`AWS4${FAKE_KEYS.ses.secretAccessKey}`, "utf8");
  for (const part of [day, region, service, "aws4_request"]) key = createHmac("sha256", key).update(part, "utf8").digest();
  const expected = createHmac("sha256", key).update(toSign, "utf8").digest();
  return timingSafeEqual(expected, Buffer.from(signature, "hex")) ? null : mismatch;
}

export async function startFakeProvider(opts: FakeProviderOptions = {}): Promise<FakeProvider> {
  const keys = {
    openai: opts.keys?.openai ?? FAKE_KEYS.openai,
    anthropic: opts.keys?.anthropic ?? FAKE_KEYS.anthropic,
    twilio: opts.keys?.twilio ?? FAKE_KEYS.twilio,
  };
  const zone = opts.timeZone ?? "UTC";
  const requests: FakeRequest[] = [];
  let openai: FakeOpenAIRow[] = [];
  let anthropic: FakeAnthropicRow[] = [];
  let twilio: FakeTwilioRow[] = [];
  let sendgrid: FakeSendGridDay[] = [];
  let postmark: FakePostmarkDay[] = [];
  let ses: FakeSesPoint[] = [];
  const files = new Map<string, string>();
  const failures: FakeFailure[] = [];

  const pageOf = <T>(buckets: T[], query: URLSearchParams) => {
    const limit = Number(query.get("limit") ?? "7");
    const size = Math.max(1, Math.min(opts.pageSize ?? 31, Number.isFinite(limit) && limit > 0 ? limit : 7));
    const offset = offsetOf(query.get("page") ?? undefined);
    return { offset, slice: buckets.slice(offset, offset + size), more: offset + size < buckets.length, next: cursorOf(offset + size) };
  };

  const serveOpenAI = (res: ServerResponse, path: string, query: URLSearchParams, auth: string | undefined) => {
    if (auth !== `Bearer ${keys.openai}`) {
      // OpenAI names the key it was given in its message: the client must never repeat it.
      const given = (auth ?? "").replace(/^Bearer /, "");
      return json(res, 401, {
        error: {
          message: `Incorrect API key provided: ${given}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      });
    }
    const start = new Date(Number(query.get("start_time")) * 1000);
    const end = query.get("end_time") ? new Date(Number(query.get("end_time")) * 1000) : new Date(start.getTime() + 7 * 86_400_000);
    if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()))
      return json(res, 400, { error: { message: "start_time is required", type: "invalid_request_error" } });
    if (query.get("bucket_width") !== null && query.get("bucket_width") !== "1d")
      return json(res, 400, { error: { message: "only 1d buckets here", type: "invalid_request_error" } });
    const projects = query.getAll("project_ids");
    const rows = openai.filter((r) => projects.length === 0 || projects.includes(r.projectId ?? "proj_default"));
    const costs = path.endsWith("/costs");
    const { offset, slice, more, next } = pageOf(bucketsOf(start, end, zone), query);
    if (offset < 0) return json(res, 400, { error: { message: "invalid page", type: "invalid_request_error" } });
    const data = slice.map((b) => {
      const day = rows.filter((r) => r.day === b.day);
      const results = costs
        ? day
            .filter((r) => r.costValue !== undefined)
            .map((r) => ({
              object: "organization.costs.result",
              amount: { value: typeof r.costValue === "string" ? Number(r.costValue) : r.costValue, currency: r.currency ?? "usd" },
              line_item: query.getAll("group_by").includes("line_item") ? (r.lineItem ?? r.model) : null,
              project_id: null,
            }))
        : [...new Set(day.map((r) => r.model))].map((model) => {
            const of = day.filter((r) => r.model === model);
            const sum = (f: (r: FakeOpenAIRow) => number) => of.reduce((n, r) => n + f(r), 0);
            return {
              object: "organization.usage.completions.result",
              input_tokens: sum((r) => r.inputTokens),
              output_tokens: sum((r) => r.outputTokens),
              input_cached_tokens: sum((r) => r.inputCachedTokens ?? 0),
              input_audio_tokens: 0,
              output_audio_tokens: 0,
              num_model_requests: of.length,
              project_id: null,
              user_id: null,
              api_key_id: null,
              model: query.getAll("group_by").includes("model") ? model : null,
              batch: null,
            };
          });
      return { object: "bucket", start_time: b.start.getTime() / 1000, end_time: b.end.getTime() / 1000, results };
    });
    return json(res, 200, { object: "page", data, has_more: more, next_page: more ? next : null });
  };

  const serveAnthropic = (res: ServerResponse, path: string, query: URLSearchParams, headers: IncomingHttpHeaders) => {
    if (headers["x-api-key"] !== keys.anthropic)
      return json(res, 401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
    if (!headers["anthropic-version"])
      return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "anthropic-version: header is required" } });
    const start = new Date(query.get("starting_at") ?? "");
    const end = query.get("ending_at") ? new Date(query.get("ending_at") ?? "") : new Date(start.getTime() + 7 * 86_400_000);
    if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()))
      return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "starting_at: a RFC 3339 timestamp is required" } });
    const groupBy = query.getAll("group_by[]");
    const workspaces = query.getAll("workspace_ids[]");
    const rows = anthropic.filter((r) => workspaces.length === 0 || workspaces.includes(r.workspaceId ?? "wrkspc_default"));
    const costs = path.endsWith("/cost_report");
    const { offset, slice, more, next } = pageOf(bucketsOf(start, end, zone), query);
    if (offset < 0) return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "invalid page" } });
    const data = slice.map((b) => {
      const day = rows.filter((r) => r.day === b.day);
      const results = costs
        ? day
            .filter((r) => r.costCents !== undefined)
            .map((r) => ({
              currency: r.currency ?? "USD",
              amount: r.costCents,
              workspace_id: groupBy.includes("workspace_id") ? (r.workspaceId ?? "wrkspc_default") : null,
              description: groupBy.includes("description") ? (r.description ?? `${r.model} Usage - Input Tokens`) : null,
              cost_type: groupBy.includes("description") ? "tokens" : null,
              context_window: null,
              model: groupBy.includes("description") ? r.model : null,
              service_tier: null,
              token_type: groupBy.includes("description") ? (r.tokenType ?? null) : null,
            }))
        : day.map((r) => ({
            uncached_input_tokens: r.uncachedInputTokens,
            cache_creation: { ephemeral_1h_input_tokens: r.cacheCreation1hInputTokens ?? 0, ephemeral_5m_input_tokens: r.cacheCreation5mInputTokens ?? 0 },
            cache_read_input_tokens: r.cacheReadInputTokens ?? 0,
            output_tokens: r.outputTokens,
            server_tool_use: { web_search_requests: 0 },
            api_key_id: null,
            workspace_id: groupBy.includes("workspace_id") ? (r.workspaceId ?? "wrkspc_default") : null,
            model: groupBy.includes("model") ? r.model : null,
            service_tier: null,
            context_window: null,
          }));
      return { starting_at: b.start.toISOString().replace(".000Z", "Z"), ending_at: b.end.toISOString().replace(".000Z", "Z"), results };
    });
    return json(res, 200, { data, has_more: more, next_page: more ? next : null });
  };

  const serveTwilio = (res: ServerResponse, sid: string, query: URLSearchParams, auth: string | undefined) => {
    const expected = `Basic ${Buffer.from(`${keys.twilio.accountSid}:${keys.twilio.authToken}`).toString("base64")}`;
    if (auth !== expected) return json(res, 401, { code: 20003, message: "Authenticate", more_info: "https://www.twilio.com/docs/errors/20003", status: 401 });
    if (sid !== keys.twilio.accountSid)
      return json(res, 404, {
        code: 20404,
        message: `The requested resource /2010-04-01/Accounts/${sid}/Usage/Records/Daily.json was not found`,
        more_info: "https://www.twilio.com/docs/errors/20404",
        status: 404,
      });
    const startDate = query.get("StartDate") ?? "";
    const endDate = query.get("EndDate") ?? "";
    if (!isProviderDay(startDate) || !isProviderDay(endDate))
      return json(res, 400, { code: 20001, message: "StartDate and EndDate must be YYYY-MM-DD", status: 400 });
    const records = twilio
      .filter((r) => r.day >= startDate && r.day <= endDate)
      .sort((a, b) => (a.day === b.day ? a.category.localeCompare(b.category) : a.day.localeCompare(b.day)))
      .map((r) => ({
        account_sid: keys.twilio.accountSid,
        api_version: "2010-04-01",
        as_of: `${endDate}T23:59:59+00:00`,
        category: r.category,
        count: String(r.count),
        count_unit: r.countUnit ?? "messages",
        description: r.category,
        end_date: r.day,
        price: typeof r.price === "string" ? Number(r.price) : (r.price ?? 0),
        price_unit: r.priceUnit ?? "usd",
        start_date: r.day,
        subresource_uris: {},
        uri: `/2010-04-01/Accounts/${sid}/Usage/Records/Daily.json?Category=${r.category}&StartDate=${r.day}&EndDate=${r.day}`,
        usage: String(r.usage ?? r.count),
        usage_unit: r.usageUnit ?? r.countUnit ?? "messages",
      }));
    const size = Math.max(1, Math.min(opts.pageSize ?? 50, Number(query.get("PageSize") ?? "50") || 50));
    const page = Number(query.get("Page") ?? "0");
    const slice = records.slice(page * size, page * size + size);
    const base = `/2010-04-01/Accounts/${sid}/Usage/Records/Daily.json?StartDate=${startDate}&EndDate=${endDate}&PageSize=${size}`;
    const more = (page + 1) * size < records.length;
    return json(res, 200, {
      usage_records: slice,
      first_page_uri: `${base}&Page=0`,
      next_page_uri: more ? `${base}&Page=${page + 1}&PageToken=PA${Buffer.from(String(page + 1)).toString("hex")}` : null,
      previous_page_uri: page > 0 ? `${base}&Page=${page - 1}` : null,
      page,
      page_size: size,
      start: page * size,
      end: page * size + slice.length - 1,
      uri: `${base}&Page=${page}`,
    });
  };

  // SendGrid: an array of days between the dates (inclusive, UTC), paged by limit and offset.
  const serveSendGrid = (res: ServerResponse, query: URLSearchParams, headers: IncomingHttpHeaders) => {
    if (headers.authorization !== `Bearer ${FAKE_KEYS.sendgrid}`) return json(res, 401, { errors: [{ field: null, message: "authorization required" }] });
    const from = query.get("start_date") ?? "";
    const to = query.get("end_date") ?? from;
    if (!isProviderDay(from) || !isProviderDay(to) || query.get("aggregated_by") !== "day")
      return json(res, 400, { errors: [{ field: "start_date", message: "start_date and aggregated_by=day are required" }] });
    const who = typeof headers["on-behalf-of"] === "string" ? headers["on-behalf-of"] : null;
    const entries: unknown[] = [];
    for (let day = from; day <= to && entries.length < 400; day = addDays(day, 1)) {
      const of = sendgrid.filter((d) => d.day === day && (d.subuser ?? null) === who);
      const requests = of.reduce((n, d) => n + d.requests, 0);
      entries.push({
        date: day,
        stats: [
          {
            metrics: {
              blocks: 0,
              bounce_drops: 0,
              bounces: 0,
              clicks: 0,
              deferred: 0,
              delivered: of.reduce((n, d) => n + (d.delivered ?? d.requests), 0),
              invalid_emails: 0,
              opens: 0,
              processed: requests,
              requests,
              spam_reports: 0,
              unique_clicks: 0,
              unique_opens: 0,
              unsubscribes: 0,
            },
          },
        ],
      });
    }
    const limit = Math.min(Number(query.get("limit") ?? "500"), opts.pageSize ?? 500);
    const offset = Number(query.get("offset") ?? "0");
    return json(res, 200, entries.slice(offset, offset + limit));
  };

  // Postmark: the days with mail between the dates, its days US Eastern (the dataset's days are);
  // every stream of the server unless messagestream names one, and only a tag's mail if tag does.
  const servePostmark = (res: ServerResponse, query: URLSearchParams, headers: IncomingHttpHeaders) => {
    if (headers["x-postmark-server-token"] !== FAKE_KEYS.postmark)
      return json(res, 401, { ErrorCode: 10, Message: "No Account or Server API tokens were supplied in the HTTP headers." });
    const from = query.get("fromdate") ?? "";
    const to = query.get("todate") ?? "";
    const stream = query.get("messagestream");
    const tag = query.get("tag");
    const sent = new Map<string, number>();
    for (const d of postmark) {
      if (d.day < from || d.day > to || (stream !== null && (d.stream ?? "outbound") !== stream) || (tag !== null && d.tag !== tag)) continue;
      sent.set(d.day, (sent.get(d.day) ?? 0) + d.sent);
    }
    const days = [...sent.entries()].sort(([a], [b]) => a.localeCompare(b));
    return json(res, 200, { Days: days.map(([Date, Sent]) => ({ Date, Sent })), Sent: days.reduce((n, [, v]) => n + v, 0) });
  };

  // SES: the Query API's XML, once the request's SigV4 signature checks out with the fake key.
  const serveSes = (res: ServerResponse, method: string, rawUrl: string, url: URL, headers: IncomingHttpHeaders) => {
    const xmlError = (status: number, code: string, message: string) =>
      res
        .writeHead(status, { "content-type": "text/xml" })
        .end(
          `<ErrorResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>fake-error</RequestId></ErrorResponse>`,
        );
    const problem = sesSignatureProblem(method, rawUrl, headers);
    if (problem) return xmlError(403, problem.code, problem.message);
    if (url.searchParams.get("Action") !== "GetSendStatistics") return xmlError(400, "InvalidAction", "Could not find operation");
    const members = ses
      .map(
        (p) =>
          `<member><DeliveryAttempts>${p.deliveryAttempts}</DeliveryAttempts><Timestamp>${new Date(p.at).toISOString().replace(".000Z", "Z")}</Timestamp><Rejects>0</Rejects><Bounces>${p.bounces ?? 0}</Bounces><Complaints>0</Complaints></member>`,
      )
      .join("\n      ");
    res
      .writeHead(200, { "content-type": "text/xml" })
      .end(
        `<GetSendStatisticsResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/">\n  <GetSendStatisticsResult>\n    <SendDataPoints>\n      ${members}\n    </SendDataPoints>\n  </GetSendStatisticsResult>\n  <ResponseMetadata>\n    <RequestId>c2b66ee5-63c3-11e0-a8c9-ebb79d1d0d04</RequestId>\n  </ResponseMetadata>\n</GetSendStatisticsResponse>\n`,
      );
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://fake.local");
    const query: Record<string, string[]> = {};
    for (const [k, v] of url.searchParams) (query[k] ??= []).push(v);
    requests.push({ method: req.method ?? "GET", path: url.pathname, query, headers: req.headers });
    const failure = failures.shift();
    if (failure) {
      if ("retryAfter" in failure)
        return json(res, 429, { error: { message: "Rate limit reached", type: "rate_limit_error" } }, { "retry-after": String(failure.retryAfter) });
      if ("html" in failure) return void res.writeHead(failure.status, { "content-type": "text/html" }).end(HTML_500);
      return void res.writeHead(failure.status, { "content-type": "text/plain" }).end(failure.body);
    }
    if (req.method !== "GET") return json(res, 405, { error: { message: "GET only" } });
    const auth = req.headers.authorization;
    if (url.pathname === "/v1/organization/usage/completions" || url.pathname === "/v1/organization/costs")
      return serveOpenAI(res, url.pathname, url.searchParams, auth);
    if (url.pathname === "/v1/organizations/usage_report/messages" || url.pathname === "/v1/organizations/cost_report")
      return serveAnthropic(res, url.pathname, url.searchParams, req.headers);
    const twilioPath = /^\/2010-04-01\/Accounts\/([^/]+)\/Usage\/Records\/Daily\.json$/.exec(url.pathname);
    if (twilioPath) return serveTwilio(res, decodeURIComponent(twilioPath[1] ?? ""), url.searchParams, auth);
    if (url.pathname === "/v3/stats") return serveSendGrid(res, url.searchParams, req.headers);
    if (url.pathname === "/stats/outbound/sends") return servePostmark(res, url.searchParams, req.headers);
    if (url.pathname === "/" && url.searchParams.has("Action")) return serveSes(res, req.method ?? "GET", req.url ?? "/", url, req.headers);
    const file = files.get(url.pathname);
    if (file !== undefined) return void res.writeHead(200, { "content-type": url.pathname.endsWith(".json") ? "application/json" : "text/csv" }).end(file);
    return json(res, 404, { error: { message: `no route ${url.pathname}` } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the fake provider did not bind a TCP port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    setOpenAI: (rows) => {
      openai = [...rows];
    },
    setAnthropic: (rows) => {
      anthropic = [...rows];
    },
    setTwilio: (rows) => {
      twilio = [...rows];
    },
    setSendGrid: (days) => {
      sendgrid = [...days];
    },
    setPostmark: (days) => {
      postmark = [...days];
    },
    setSes: (points) => {
      ses = [...points];
    },
    setFile: (path, text) => {
      files.set(path.startsWith("/") ? path : `/${path}`, text);
    },
    failNext: (n, failure) => {
      for (let i = 0; i < n; i++) failures.push(failure);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
