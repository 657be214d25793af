import type { Metadata } from "next";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { listChangeRequests, pendingChangeRequests } from "@/lib/changes";
import { ChangesPageView } from "./_components/changes-view";

export const metadata: Metadata = { title: "Change requests · Ceilings" };
export const dynamic = "force-dynamic";

const PAGE = 25;

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

// Staff of every role see what is asked and decided; only the controls on a request's page differ.
export default async function ChangesPage({ searchParams }: Props) {
  await requirePageRole("viewer");
  const raw = (await searchParams).before;
  // Keyset by id, newest first; a cursor that is not one (hand-edited) shows the first page.
  const before = typeof raw === "string" && /^\d{1,9}$/.test(raw) ? Number(raw) : null;
  const db = await getDb();
  const now = new Date();
  const [pending, page] = await Promise.all([
    before === null ? pendingChangeRequests(db, now) : Promise.resolve([]),
    listChangeRequests(db, { limit: PAGE, cursor: before ?? undefined }),
  ]);
  // Pending ones are listed above in full; a page of the log keeps its place by id, so one that
  // holds pending requests is shorter, never overlapping the next.
  const decided = page.rows.filter((r) => r.state !== "pending");
  return <ChangesPageView view={{ pending, decided, nextCursor: page.nextCursor, cursor: before }} now={now} />;
}
