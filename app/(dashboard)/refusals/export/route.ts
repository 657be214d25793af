import type { NextRequest } from "next/server";
import { getDb } from "@/db/client";
import { getSessionStaff } from "@/app/_lib/session";
import { exportRefusalsCore } from "./export-core";

export const dynamic = "force-dynamic";

/** GET /refusals/export?endpoint=&gate=&caller=&destination=&from=&to=: the filtered log as CSV. */
export async function GET(request: NextRequest): Promise<Response> {
  const params: Record<string, string> = {};
  for (const [k, v] of request.nextUrl.searchParams) if (!(k in params)) params[k] = v;
  return exportRefusalsCore({ session: getSessionStaff, db: getDb }, params);
}
