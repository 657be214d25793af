import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";

export default tseslint.config(
  { ignores: [".next*/", ".client-build/", "node_modules/", ".data/", ".data-*/", "playwright-report/", "test-results/", "db/migrations/", "next-env.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-syntax": [
        "error",
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: "Read the environment through lib/env.ts." },
      ],
    },
  },
  {
    // Layers: presentation never reaches the database; it gets prepared data from a loader in app/.
    files: ["components/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [{ group: ["@/db/*", "drizzle-orm", "drizzle-orm/*", "postgres"], allowTypeImports: true, message: "components/ is presentation only: load data in app/ and pass it as props." }] },
      ],
    },
  },
  {
    files: ["lib/env.ts", "*.config.ts", "*.config.mts", "*.config.mjs", "*.config.js", "scripts/**"],
    rules: { "no-restricted-syntax": "off" },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: { globals: { module: "writable", require: "readonly", process: "readonly", console: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
