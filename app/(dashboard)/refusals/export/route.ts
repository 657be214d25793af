import type { NextRequest } from "next/server";
import { getDb } from "@/db/client";
import { getSessionStaff } from "@/app/_lib/session";
import { exportRefusalsRequest } from "./export-core";

export const dynamic = "force-dynamic";

const deps = { session: getSessionStaff, db: getDb };

/** POST /refusals/export with the filters as form fields: the filtered log as CSV. */
export async function POST(request: NextRequest): Promise<Response> {
  return exportRefusalsRequest(deps, request);
}

/** A GET changes nothing: it answers 405 so a link or a cross-site navigation writes no audit row. */
export async function GET(request: NextRequest): Promise<Response> {
  return exportRefusalsRequest(deps, request);
}
