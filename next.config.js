/** @type {import('next').NextConfig} */
const nextConfig = {
  // The e2e suite builds into its own folder so it never disturbs a running dashboard.
  distDir: process.env.NEXT_DIST_DIR || ".next",
  allowedDevOrigins: ["127.0.0.1"],
  poweredByHeader: false,
};

module.exports = nextConfig;
