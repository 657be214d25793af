import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { getDb } from "@/db/client";
import { requirePageRole } from "@/app/_lib/session";
import { getChangeRequest } from "@/lib/changes";
import { listRequestTrail } from "@/lib/changes/trail";
import { isIndependent } from "@/lib/changes/who";
import { RequestPageView } from "../_components/request-view";

export const dynamic = "force-dynamic";

type Params = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const { id } = await params;
  return { title: `Request #${id.slice(0, 12)} · Ceilings` };
}

export default async function ChangeRequestPage({ params }: Params) {
  const staff = await requirePageRole("viewer");
  const raw = (await params).id;
  if (!/^\d{1,9}$/.test(raw)) notFound();
  const db = await getDb();
  const request = await getChangeRequest(db, Number(raw));
  if (!request) notFound();
  const [trail, independent] = await Promise.all([listRequestTrail(db, request), isIndependent(db, request.requestedById, staff.id)]);
  return <RequestPageView request={request} trail={trail} viewer={{ staffId: staff.id, role: staff.role, independent }} now={new Date()} />;
}
