import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { KeysetCursor } from "@/lib/keyset";
import { listChangeRequests } from "@/lib/changes";
import { ChangesPageView } from "./_components/changes-view";

export const metadata: Metadata = { title: "Change requests · Ceilings" };
export const dynamic = "force-dynamic";

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

// Staff of every role see what is asked and decided; only the controls on a request's page differ.
export default async function ChangesPage({ searchParams }: Props) {
  await requirePageRole("viewer");
  const raw = (await searchParams).cursor;
  // A cursor that is not one (hand-edited) shows the first page rather than an error.
  const cursor = typeof raw === "string" && KeysetCursor.safeParse(raw).success ? raw : null;
  const db = await getDb();
  const now = new Date();
  const [pending, decided] = await Promise.all([
    cursor === null ? listChangeRequests(db, { state: "pending", limit: 200 }) : Promise.resolve({ requests: [], nextCursor: null }),
    listChangeRequests(db, { state: "decided", limit: 25, cursor: cursor ?? undefined }),
  ]);
  return <ChangesPageView view={{ pending: pending.requests, decided: decided.requests, nextCursor: decided.nextCursor, cursor }} now={now} />;
}
