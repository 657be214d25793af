import NextAuth from "next-auth";
import type { NextRequest } from "next/server";
import { authOptions } from "@/app/_lib/auth-options";

type Context = { params: Promise<{ nextauth: string[] }> };

// The options are resolved per request (built once): the session secret is read at run time, not
// while `next build` collects this module.
async function handler(request: NextRequest, context: Context): Promise<Response> {
  return NextAuth(request, context, authOptions());
}

export { handler as GET, handler as POST };
