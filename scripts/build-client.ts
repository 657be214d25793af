// npm run build:client: compiles lib/client (types included) into .client-build/package with its
// own package.json and README, then packs it with npm into .client-build/<name>-<version>.tgz.
// Prints the tarball's absolute path last, so a script can install it: `npm i "$(... | tail -1)"`.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const source = path.join(root, "lib", "client");
const out = path.join(root, ".client-build");
const pkgDir = path.join(out, "package");

rmSync(out, { recursive: true, force: true });
mkdirSync(pkgDir, { recursive: true });
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
execFileSync(process.execPath, [tsc, "-p", path.join(source, "tsconfig.build.json")], { stdio: "inherit" });
copyFileSync(path.join(source, "package.json"), path.join(pkgDir, "package.json"));
copyFileSync(path.join(source, "README.md"), path.join(pkgDir, "README.md"));

const manifest = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
// The contract of the package: nothing but fetch at run time.
if (manifest.dependencies && Object.keys(manifest.dependencies).length > 0) {
  throw new Error(`lib/client/package.json must have no dependencies, has ${Object.keys(manifest.dependencies).join(", ")}`);
}
const packed = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], { cwd: pkgDir, encoding: "utf8" }).trim().split("\n").pop() ?? "";
console.log(path.join(out, packed));
