/** @type {import('next').NextConfig} */
const nextConfig = {
  // The e2e suite builds into its own folder so it never disturbs a running dashboard.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  allowedDevOrigins: ["127.0.0.1"],
  poweredByHeader: false,
  // Above the 1 MB default so an oversized field reaches the action's input boundary and comes
  // back as a form error naming it (app/_lib/strict-form.ts) instead of a failed request.
  experimental: { serverActions: { bodySizeLimit: "4mb" } },
  // proxy.ts sets the security headers on everything else; Next's build output skips the proxy,
  // so it gets them here (no script runs from these files as a document).
  async headers() {
    return [
      {
        source: "/_next/:path*",
        headers: [
          { key: "Content-Security-Policy", value: "default-src 'none'; frame-ancestors 'none'" },
          { key: "X-Frame-Options", value: "DENY" },
          { key: "X-Content-Type-Options", value: "nosniff" },
          { key: "Referrer-Policy", value: "same-origin" },
        ],
      },
    ];
  },
};

module.exports = nextConfig;
