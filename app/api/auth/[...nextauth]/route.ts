import NextAuth from "next-auth";
import { NextRequest } from "next/server";
import { authOptions } from "@/app/_lib/auth-options";

type Context = { params: Promise<{ nextauth: string[] }> };

// The options are resolved per request (built once): the session secret is read at run time, not
// while `next build` collects this module.
async function handler(request: NextRequest, context: Context): Promise<Response> {
  if (request.method === "HEAD") {
    // next-auth answers HEAD with 400; HEAD is GET without its body, as on every other route.
    const answer = await NextAuth(new NextRequest(request, { method: "GET" }), context, authOptions());
    return new Response(null, { status: answer.status, headers: answer.headers });
  }
  return NextAuth(request, context, authOptions());
}

export { handler as GET, handler as POST };
