import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";

// lib/ modules that import nothing of the project, so the layers below lib/ may read them.
const LIB_LEAVES = ["env", "vocabulary", "ci"];

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
        {
          patterns: [
            {
              group: ["@/db/*", "drizzle-orm", "drizzle-orm/*", "postgres"],
              allowTypeImports: true,
              message: "components/ is presentation only: load data in app/ and pass it as props.",
            },
          ],
        },
      ],
    },
  },
  {
    // Layers: app/ reads and writes through lib/; the query builder and the tables stay below it.
    files: ["app/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["drizzle-orm", "drizzle-orm/*", "@/db/schema", "@/db/schema/*", "**/db/schema", "**/db/schema/*"],
              message: "app/ reads and writes through lib/: add a named function in lib/<domain>/ and call it.",
            },
          ],
        },
      ],
    },
  },
  {
    // Layers: lib/ is the domain, callable from a script or a test without a web framework.
    files: ["lib/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["next", "next/*", "next-auth", "next-auth/*", "react", "react/*", "react-dom", "react-dom/*"],
              message: "lib/ knows no framework: keep Next, next-auth and React in app/ and components/.",
            },
          ],
        },
      ],
    },
  },
  {
    // Layers: db/ is the bottom (connections, tables, SQL functions) and knows nothing of the domain.
    // It may read lib/'s leaves, modules that import nothing of the project (the rule below keeps
    // them so): the environment parser, the vocabulary its enums are built from, the CI flag.
    files: ["db/**"],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@/lib/*", "**/lib/*", ...LIB_LEAVES.flatMap((leaf) => [`!@/lib/${leaf}`, `!**/lib/${leaf}`])],
              message: "db/ sits below lib/: move the code that needs the domain into lib/ or scripts/.",
            },
          ],
        },
      ],
    },
  },
  {
    files: LIB_LEAVES.map((leaf) => `lib/${leaf}.ts`),
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [{ group: ["@/*", "./*", "../*"], message: "a leaf of lib/ that db/ reads imports nothing of the project." }] },
      ],
    },
  },
  {
    // Tests look at a layer from outside: they check the rows an action wrote with SQL of their own
    // rather than through the lib/ reads under test, set up states no lib/ verb makes (a staff row
    // changed under a live session, a key last used long ago), and hold db/'s SQL to lib/'s contract.
    files: ["app/**/*.test.ts", "app/**/test-support.ts", "db/**/*.test.ts"],
    rules: { "@typescript-eslint/no-restricted-imports": "off" },
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
