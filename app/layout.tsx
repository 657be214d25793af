import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Ceilings", template: "%s · Ceilings" },
  description: "Hard, bounded spend ceilings for endpoints whose success costs money.",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Every page renders per request: Next can only stamp the CSP nonce (proxy.ts) on its inline
  // scripts when it renders, and a prerendered page would carry none and fail the policy.
  await connection();
  return (
    <html lang="en">
      <body className="min-h-screen">{children}</body>
    </html>
  );
}
