import { openApiDocument } from "@/lib/http";

// Public on purpose: the description of the API holds no data, and clients generate code from it.
export const dynamic = "force-static";

export function GET(): Response {
  return Response.json(openApiDocument(), { headers: { "cache-control": "public, max-age=300" } });
}
