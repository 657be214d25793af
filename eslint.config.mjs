import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import path from "node:path";

// lib/ modules that import nothing of the project, so the layers below lib/ may read them.
const LIB_LEAVES = ["env", "vocabulary", "ci"];

// lib/'s domains (a folder, or a file at lib/'s top), bottom first. A domain imports only domains
// of the layers below its own, so no two domains import each other, directly or round a loop: a
// newcomer can change a domain knowing what it can break (the layers above it) and what it stands
// on. When two domains need each other, what both need moves down (the limits kernel holds what a
// ceiling and a budget share; control holds change control's rule, changes its request machinery).
// A new domain is placed here, or lint refuses its files. Tests and their fixtures are exempt: they
// look at a domain from outside.
const LIB_LAYERS = [
  ["ci", "client", "database-status", "env", "errors", "format", "search-params", "security", "time", "vocabulary"],
  ["canonical", "connection-bound", "control", "money", "throttle"],
  ["http"],
  ["keyset"],
  ["audit"],
  ["auth", "limits"],
  ["refusals"],
  ["log"],
  ["alerts", "counters"],
  ["spend"],
  ["budgets"],
  ["ceilings", "enforcement"],
  ["api-keys", "metrics", "plans"],
  ["accounts", "catalog", "staff-tokens"],
  ["changes", "reconciliation"],
  ["demo", "worker"],
];
const layerOf = new Map(LIB_LAYERS.flatMap((domains, layer) => domains.map((domain) => [domain, layer])));
const LIB_ROOT = path.join(import.meta.dirname, "lib");

/** The domain of a path inside lib/ (its first folder, or the file's name at the top), else null. */
function libDomain(file) {
  const rel = path.relative(LIB_ROOT, file);
  if (rel.startsWith("..") || path.isAbsolute(rel)) return null;
  const [first, ...rest] = rel.split(path.sep);
  return rest.length > 0 ? first : first.replace(/\.(ts|tsx|mjs|js)$/, "");
}

const domainLayers = {
  meta: { type: "problem", schema: [], docs: { description: "lib/'s domains import only the layers below their own (LIB_LAYERS)" } },
  create(context) {
    const from = libDomain(context.filename);
    if (from === null) return {};
    const fromLayer = layerOf.get(from);
    const check = (node, spec) => {
      if (typeof spec !== "string") return;
      const target = spec.startsWith("@/lib/")
        ? libDomain(path.join(LIB_ROOT, spec.slice("@/lib/".length)))
        : spec.startsWith(".")
          ? libDomain(path.resolve(path.dirname(context.filename), spec))
          : null;
      if (target === null || target === from || fromLayer === undefined) return;
      const targetLayer = layerOf.get(target);
      if (targetLayer === undefined) {
        context.report({ node, message: `lib/${target} has no layer: place it in LIB_LAYERS (eslint.config.mjs) before importing it.` });
      } else if (targetLayer >= fromLayer) {
        context.report({
          node,
          message:
            `lib/${from} (layer ${fromLayer}) may not import lib/${target} (layer ${targetLayer}): a domain imports only the layers below its own, ` +
            `so no two domains import each other. Move what both need down a layer, or move lib/${target} down in LIB_LAYERS if nothing it imports sits at or above lib/${from}.`,
        });
      }
    };
    return {
      Program(node) {
        if (fromLayer === undefined) context.report({ node, message: `lib/${from} has no layer: place it in LIB_LAYERS (eslint.config.mjs).` });
      },
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === "Literal" && check(node, node.source.value),
    };
  },
};

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
    files: ["lib/**/*.ts", "lib/**/*.tsx"],
    ignores: ["lib/**/*.test.ts", "lib/**/*.test.tsx", "lib/**/*.fixture.ts", "lib/**/test-fixtures.ts"],
    plugins: { ceilings: { rules: { "domain-layers": domainLayers } } },
    rules: { "ceilings/domain-layers": "error" },
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
